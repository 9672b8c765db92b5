"""Property tests: a planted secret never survives redaction, whatever text surrounds it.

The surrounding text is random printable text and code-ish snippets, glued directly to the
secret (no separating space), raw and JSON-encoded, so the rules cannot lean on tidy word
boundaries. Secrets are drawn per kind from realistic shapes: vendor keys with their real
prefixes and lengths, and for named values a credential-like string (letters, digits and
punctuation with a digit inside a word — see ADR-009 for why pure dictionary words after a
name are judged as code).
"""

from __future__ import annotations

import base64
import json
import string

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hindsight_hooks.governance.redact import contains_secret, redact_text, redact_value

ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"

CODE_SNIPPETS = [
    "def f(x):\n    return x\n",
    "password = get_password()\n",
    "token = os.environ['TOKEN']\n",
    'print("Password: ", end="")\n',
    "self.token = token\n",
    '{"a": 1, "b": [1, 2]}',
    "if a == b and c != d:",
    "https://example.com/path?x=1&y=2",
    "x = {'k': v for k, v in d.items()}",
    '\\n\\t\\"',
    "-- ; // /* */ # ",
    "SELECT * FROM t WHERE a = 'b';",
    "key: value\n",
    "api_key: str | None = None\n",
    "Authorization: ",
    "Cookie: ",
    "Bearer ",
    "'\"`",
    "():[]{}<>",
    "max_tokens=800, ",
]

surrounding = st.lists(
    st.one_of(
        st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=30),
        st.sampled_from(CODE_SNIPPETS),
        st.text(alphabet=string.printable, max_size=20),
    ),
    max_size=4,
).map("".join)


def _chars(alphabet: str, lo: int, hi: int) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=lo, max_size=hi)


@st.composite
def credential(draw: st.DrawFn, punctuation: str = "!@#%^*+=_-./~") -> str:
    """A credential-like value: starts with a letter, has a digit followed by a letter inside."""
    head = draw(st.sampled_from(string.ascii_letters)) + draw(_chars(ALNUM + punctuation, 2, 12))
    core = draw(st.sampled_from(string.digits)) + draw(st.sampled_from(string.ascii_letters))
    tail = draw(_chars(ALNUM + punctuation, 3, 20))
    return head + core + tail


@st.composite
def b64_secret(draw: st.DrawFn, lo: int = 12, hi: int = 40) -> str:
    return draw(_chars(B64, lo, hi)) + draw(st.sampled_from(string.digits)) + draw(_chars(B64, 1, 8))


# issue 9 item 2: the families that once survived (ADR-061), drawn by ``new_family``.
NEW_FAMILY_KINDS = (
    "pypi",
    "twilio",
    "sendgrid",
    "telegram",
    "vault",
    "mailgun",
    "slack_webhook",
    "connection_string",
    "cli_password",
    "docker_auth",
    "name_prefixed",
)


@st.composite
def planted(draw: st.DrawFn) -> tuple[str, str]:
    """(text to plant, secret substring that must not survive)."""
    kind = draw(
        st.sampled_from(
            [
                "openai",
                "anthropic",
                "github",
                "github_pat",
                "aws",
                "slack",
                "google",
                "stripe",
                "jwt",
                "bearer",
                "pem",
                "userinfo",
                "query",
                "env",
                "yaml",
                "assign_quoted",
                "json",
                "py_dict",
                "cli",
                "basic",
                "cookie",
                "kwarg",
                "header",
                *NEW_FAMILY_KINDS,
            ]
        )
    )
    if kind == "openai":
        body = draw(_chars(ALNUM, 20, 50)) + draw(st.sampled_from(string.digits))
        return f"sk-{draw(st.sampled_from(['', 'proj-']))}{body}", body
    if kind == "anthropic":
        body = draw(_chars(ALNUM + "-_", 30, 60)) + draw(st.sampled_from(string.digits))
        return f"sk-ant-api03-{body}", body
    if kind == "github":
        body = draw(_chars(ALNUM, 36, 36))
        return f"gh{draw(st.sampled_from('pousr'))}_{body}", body
    if kind == "github_pat":
        body = draw(_chars(ALNUM + "_", 40, 82))
        return f"github_pat_{body}", body
    if kind == "aws":
        body = draw(_chars(string.ascii_uppercase + string.digits, 16, 16))
        prefix = draw(st.sampled_from(["AKIA", "ASIA"]))
        return prefix + body, prefix + body
    if kind == "slack":
        body = draw(_chars(ALNUM, 10, 40))
        return f"xox{draw(st.sampled_from('abprs'))}-{body}", body
    if kind == "google":
        body = draw(_chars(ALNUM + "-_", 35, 35))
        return f"AIza{body}", body
    if kind == "stripe":
        body = draw(_chars(ALNUM, 24, 32))
        return f"{draw(st.sampled_from(['sk', 'rk', 'pk']))}_live_{body}", body
    if kind == "jwt":
        parts = [draw(_chars(B64URL, 10, 40)) for _ in range(3)]
        return f"eyJ{parts[0]}.eyJ{parts[1]}.{parts[2]}", f"{parts[1]}.{parts[2]}"
    if kind == "bearer":
        token = draw(b64_secret())
        return f"Bearer {token}", token
    if kind == "pem":
        label = draw(st.sampled_from(["RSA ", "EC ", "OPENSSH ", "ENCRYPTED ", ""]))
        lines = [draw(_chars(B64, 20, 64)) for _ in range(draw(st.integers(1, 4)))]
        body = "\n".join(lines)
        return f"-----BEGIN {label}PRIVATE KEY-----\n{body}\n-----END {label}PRIVATE KEY-----", lines[0]
    if kind in NEW_FAMILY_KINDS:
        return draw(new_family(kind))
    value = draw(credential())
    if kind == "userinfo":
        value = draw(credential(punctuation="-._~!*+"))
        return f"postgres://app:{value}@db.internal:5432/main", value
    if kind == "query":
        value = draw(credential(punctuation="-._~"))
        name = draw(st.sampled_from(["access_token", "api_key", "sig", "X-Amz-Signature", "auth", "client_secret"]))
        return f"https://h.example/p?x=1&{name}={value}", value
    if kind == "env":
        name = draw(st.sampled_from(["AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "OPENAI_API_KEY"]))
        return f"export {name}={value}", value
    if kind == "yaml":
        name = draw(st.sampled_from(["password", "client_secret", "api_key", "token", "apiKey", "secret"]))
        return f"{name}: {value}", value
    if kind == "assign_quoted":
        name = draw(st.sampled_from(["password", "SECRET_KEY", "access_token", "self.api_key"]))
        q = draw(st.sampled_from(['"', "'"]))
        return f"{name} = {q}{value}{q}", value
    if kind == "json":
        name = draw(st.sampled_from(["token", "password", "api_key", "refresh_token", "authorization"]))
        return json.dumps({name: value}), value
    if kind == "py_dict":
        return f"{{'password': '{value}', 'user': 'x'}}", value
    if kind == "cli":
        flag = draw(st.sampled_from(["--password", "--token", "--api-key", "--client-secret"]))
        sep = draw(st.sampled_from([" ", "="]))
        return f"tool {flag}{sep}{value} --verbose", value
    if kind == "basic":
        token = draw(b64_secret())
        return f"Authorization: Basic {token}", token
    if kind == "cookie":
        value = draw(credential(punctuation="-._~"))
        return f"Cookie: sid={value}; theme=dark", value
    if kind == "kwarg":
        return f"connect(host='db', password='{value}')", value
    # header
    return f"X-Api-Key: {value}", value


HEX = "0123456789abcdef"


@st.composite
def new_family(draw: st.DrawFn, kind: str) -> tuple[str, str]:
    """The families of issue 9 item 2. Shapes whose rule needs a word boundary (a short prefix,
    a command name) are planted after a line break or space: glued to a word they are no longer
    that shape (``TASK<hex>``, ``xmysql``)."""
    if kind == "pypi":
        body = draw(_chars(B64URL, 50, 120))
        return f"pypi-AgEIcHlwaS5vcmc{body}", body
    if kind == "twilio":
        body = draw(_chars(HEX, 32, 32))
        return f" SK{body} ", body
    if kind == "sendgrid":
        head = draw(_chars(B64URL, 21, 21)) + draw(st.sampled_from(string.digits))
        body = draw(_chars(B64URL, 42, 42)) + draw(st.sampled_from(string.digits))
        return f" SG.{head}.{body} ", body
    if kind == "telegram":
        bot = draw(_chars(string.digits, 8, 10))
        body = draw(_chars(B64URL, 33, 33))
        return f" {bot}:AA{body} ", "AA" + body
    if kind == "vault":
        body = draw(_chars(B64URL, 24, 90))
        return f"hv{draw(st.sampled_from('sb'))}.{body}", body
    if kind == "mailgun":
        body = draw(_chars(HEX, 32, 32))
        return f" key-{body} ", body
    if kind == "slack_webhook":
        team = draw(_chars(string.ascii_uppercase + string.digits, 8, 10))
        hook = draw(_chars(string.ascii_uppercase + string.digits, 8, 10))
        body = draw(_chars(ALNUM, 24, 24))
        return f"https://hooks.slack.com/services/T{team}/B{hook}/{body}", body
    value = draw(credential(punctuation="!@#%^*+_-./~"))
    if kind == "connection_string":
        name = draw(st.sampled_from(["Password", "Pwd", "PWD", "AccountKey", "SharedAccessKey", "password"]))
        return f"\nServer=tcp:db,1433;Database=app;{name}={value};Encrypt=True\n", value
    if kind == "cli_password":
        form = draw(
            st.sampled_from(
                [
                    "mysql -uroot -p{v} shop",
                    "mysqldump -u root -p'{v}' shop",
                    "sshpass -p '{v}' ssh host",
                    "sshpass -p {v} ssh host",
                    "az login -u me@example.com -p {v}",
                    "docker login -u ci -p {v} registry",
                    "redis-cli -a {v} ping",
                    "curl -u admin:{v} https://x",
                    "PGPASSWORD={v} psql -h db",
                    "MYSQL_PWD={v} mysql",
                    "openssl pkcs12 -passout pass:{v}",
                ]
            )
        )
        return "\n" + form.format(v=value) + "\n", value
    if kind == "docker_auth":
        user = draw(_chars(string.ascii_lowercase, 3, 10))
        blob = base64.b64encode(f"{user}:{value}".encode()).decode()
        return json.dumps({"auths": {"registry.example.com": {"auth": blob}}}), blob
    # name_prefixed: a value that starts with its own key's name, then digits
    name = draw(st.sampled_from(["password", "token", "secret", "passwd", "apikey", "DB_PASSWORD", "api_token"]))
    stem = name.lower().split("_")[-1]
    value = draw(st.sampled_from([stem, stem[:3], stem.capitalize()])) + draw(_chars(string.digits, 3, 12))
    sep = draw(st.sampled_from(["=", ": ", " = "]))
    return f"\n{name}{sep}{value}\n", value


COMMON = settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@COMMON
@given(prefix=surrounding, secret=planted(), suffix=surrounding)
def test_planted_secret_never_survives(prefix: str, secret: tuple[str, str], suffix: str) -> None:
    planted_text, must_vanish = secret
    assume(must_vanish not in prefix and must_vanish not in suffix)
    out = redact_text(prefix + planted_text + suffix)
    assert must_vanish not in out
    assert contains_secret(prefix + planted_text + suffix)


@COMMON
@given(prefix=surrounding, secret=planted(), suffix=surrounding)
def test_planted_secret_never_survives_json_encoding(prefix: str, secret: tuple[str, str], suffix: str) -> None:
    """Retained content is JSON text: escapes must neither hide a secret nor break the JSON."""
    planted_text, must_vanish = secret
    assume(must_vanish not in prefix and must_vanish not in suffix)
    encoded = json.dumps({"content": prefix + planted_text + suffix, "role": "user"})
    out = redact_text(encoded)
    assert json.dumps(must_vanish)[1:-1] not in out
    decoded = json.loads(out)  # still valid JSON
    assert decoded["role"] == "user"
    assert must_vanish not in decoded["content"]


@COMMON
@given(prefix=surrounding, secret=planted(), suffix=surrounding)
def test_redaction_is_idempotent(prefix: str, secret: tuple[str, str], suffix: str) -> None:
    once = redact_text(prefix + secret[0] + suffix)
    assert redact_text(once) == once


@settings(max_examples=400, deadline=None)
@given(text=st.text(max_size=300))
def test_idempotent_on_arbitrary_text(text: str) -> None:
    once = redact_text(text)
    assert redact_text(once) == once


@settings(max_examples=200, deadline=None)
@given(secret=planted(), key=st.sampled_from(["token", "password", "apiKey", "Authorization", "cookie", "note"]))
def test_redact_value_hides_secrets_in_structures(secret: tuple[str, str], key: str) -> None:
    planted_text, must_vanish = secret
    data = {"meta": {key: planted_text}, "items": [planted_text, {"nested": (planted_text,)}], "n": 3}
    out = redact_value(data)
    assert must_vanish not in json.dumps(out)
    assert out["n"] == 3
    assert isinstance(out["items"][1]["nested"], tuple)
