"""docs/governance.md#redaction: one example per rule, the code that must survive, and the false-positive
rate."""

from __future__ import annotations

import json
import sysconfig
import time
from pathlib import Path

import pytest

from hindsight_hooks.governance.redact import contains_secret, redact_error, redact_text, redact_value

REDACTED_CASES = [
    # (input, expected output)
    ("Authorization: Bearer abcDEF0123456789xyz", "Authorization: Bearer [REDACTED]"),
    ("curl -H 'authorization: bearer abcDEF0123456789'", "curl -H 'authorization: Bearer [REDACTED]'"),
    ("key=sk-proj-AbC123dEf456GhI789jKl012mNo345", "key=[REDACTED_API_KEY]"),
    ("sk-ant-api03-AbCdEf0123456789AbCdEf0123456789-x_y", "[REDACTED_API_KEY]"),
    ("sk-AbC123dEf456GhI789jKl012mNo345pQr678", "[REDACTED_API_KEY]"),
    ("x=xsk-AbC123dEf456GhI789jKl012mNo345pQr678", "x=x[REDACTED_API_KEY]"),
    ("key: sk-abcdefghijklmnopqrstuvwxyz", "key: [REDACTED_API_KEY]"),
    ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED_GITHUB_TOKEN]"),
    ("gho_abcdefghijklmnopqrstuvwxyz0123456789 ghu_ ghs_x", "[REDACTED_GITHUB_TOKEN] ghu_ ghs_x"),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "[REDACTED_GITHUB_TOKEN]"),
    ("ids AKIAIOSFODNN7EXAMPLE, ASIAIOSFODNN7EXAMPLE.", "ids [REDACTED_AWS_KEY], [REDACTED_AWS_KEY]."),
    ("xoxb-123456789012-abcdefghijkl and xoxp-1-2-3-abcdef", "[REDACTED_SLACK_TOKEN] and [REDACTED_SLACK_TOKEN]"),
    ("AIzaSyA-1234567890abcdefghijklmnopqrstu", "[REDACTED_GOOGLE_KEY]"),
    ("sk_live_4eC39HqLyjWDarjtT1zdp7dc rk_live_abcdefghijk12", "[REDACTED_STRIPE_KEY] [REDACTED_STRIPE_KEY]"),
    (
        "glpat-abcdefghij0123456789 npm_abcdefghijklmnopqrstuvwxyz0123456789",
        "[REDACTED_GITLAB_TOKEN] [REDACTED_NPM_TOKEN]",
    ),
    (
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U end",
        "jwt [REDACTED_JWT] end",
    ),
    (
        "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nabc+/=\n-----END RSA PRIVATE KEY-----\nb",
        "a\n[REDACTED_PRIVATE_KEY]\nb",
    ),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nbm9uZQ (cut)", "[REDACTED_PRIVATE_KEY](cut)"),
    ("-----BEGIN PGP PRIVATE KEY BLOCK-----\nabc\n-----END PGP PRIVATE KEY BLOCK-----", "[REDACTED_PRIVATE_KEY]"),
    ("export DB_PASSWORD=hunter2", "export DB_PASSWORD=[REDACTED]"),
    ("GITHUB_TOKEN=abc123 make", "GITHUB_TOKEN=[REDACTED] make"),
    ('API_KEY="abc123def456"', 'API_KEY="[REDACTED]"'),
    ("password: hunter2", "password: [REDACTED]"),
    ("password: sekrit", "password: [REDACTED]"),
    ("client_secret = 'xK9mQ2vL8pR4'", "client_secret = '[REDACTED]'"),
    ("X-Api-Key: 0123456789abcdef", "X-Api-Key: [REDACTED]"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = [REDACTED]"),
    ('{"token": "abc123", "n": 1}', '{"token": "[REDACTED]", "n": 1}'),
    ('{"access_token":"abc123XYZ","token_type":"bearer"}', '{"access_token":"[REDACTED]","token_type":"bearer"}'),
    ("cfg = {'password': 'p@ss w0rd!'}", "cfg = {'password': '[REDACTED]'}"),
    ("connect(host='db', password='s3cr3t')", "connect(host='db', password='[REDACTED]')"),
    ("mysql --password hunter2x -u root", "mysql --password [REDACTED] -u root"),
    ("tool --api-key=abc123def --v", "tool --api-key=[REDACTED] --v"),
    ("user=app password=s3cr3t host=db", "user=app password=[REDACTED] host=db"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [REDACTED]"),
    ("Cookie: session=abc123; csrftoken=xyz", "Cookie: [REDACTED]"),
    ('Cookie: a="xyz123"; b=c', "Cookie: [REDACTED]"),
    (
        'Authorization: Digest username="Mufasa", response="6629fae49393a05397450978507c4ef1"',
        "Authorization: Digest [REDACTED]",
    ),
    ("set-cookie: id=a3fWa; Expires=Thu, 21 Oct 2021 07:28:00 GMT; Secure", "set-cookie: [REDACTED]"),
    ("postgres://admin:hunter2@db.example.com:5432/app", "postgres://[REDACTED]@db.example.com:5432/app"),
    ("https://x-access-token:ghs_abc@github.com/o/r", "https://[REDACTED]@github.com/o/r"),
    ("https://u:p@ss@host/x", "https://[REDACTED]@host/x"),
    (
        "GET /v1?api_key=abc123XYZ&x=1&signature=deadbeef99&auth=zz",
        "GET /v1?api_key=[REDACTED]&x=1&signature=[REDACTED]&auth=[REDACTED]",
    ),
]


@pytest.mark.parametrize(("raw", "expected"), REDACTED_CASES)
def test_each_rule(raw: str, expected: str) -> None:
    assert redact_text(raw) == expected
    assert redact_text(expected) == expected
    assert contains_secret(raw)


KEPT = [
    "password = get_password()",
    "password = getpass.getpass('Password: ')",
    "password: str | None = None",
    "def login(user: str, password: str = '') -> Token:",
    "token = os.environ['TOKEN']",
    "token = tokens[i]",
    "self.password = password",
    "connect(password=password, token=token, api_key=api_key)",
    "secret_key = settings.SECRET_KEY",
    "api_key: Optional[str] = None",
    "token: Token",
    "password_hash = hash(password)",
    "max_tokens = 800000",
    "tokenizer = AutoTokenizer.from_pretrained(name)",
    "pad_token = '[PAD]'",
    "eos_token = '</s>'",
    "url = f'https://{user}:{password}@{host}/db'",
    "q = '?token=' + token",
    "password = '{password}'",
    "TOKEN = ${GITHUB_TOKEN}",
    "export GITHUB_TOKEN=$GITHUB_TOKEN",
    "N_TOKENS = 68",
    "token = None",
    "if token == expected_token:",
    "print('Enter password: ', end='')",
    "headers['Authorization'] = f'Bearer {token}'",
    "Bearer authentication is described in RFC 6750.",
    "passwd = acct = ''",
    ":param password: the password to use",
    "The token: it is refreshed hourly.",
    "Set a token in the config file.",
    "cookie: str = ''",
    "ssh git@github.com:owner/repo.git",
    "ask-questions-about-everything",
    "see disk-usage-report-2024-01-01.csv and task-20240101-cleanup-job-v2",
    "[REDACTED] and [REDACTED_API_KEY]",
]


@pytest.mark.parametrize("line", KEPT)
def test_ordinary_code_survives(line: str) -> None:
    assert redact_text(line) == line
    assert not contains_secret(line)


def test_json_text_stays_valid_json() -> None:
    doc = {
        "content": 'password = "hunter2"\nDB_TOKEN=abc123\n{"token": "zzz999"}\nAuthorization: Basic dXNlcjpw',
        "args": {"cmd": "curl -H 'Cookie: sid=abc123' https://u:pw@h/x?token=t0k3n"},
    }
    out = redact_text(json.dumps(doc, indent=2))
    decoded = json.loads(out)
    assert decoded["content"] == (
        'password = "[REDACTED]"\nDB_TOKEN=[REDACTED]\n{"token": "[REDACTED]"}\nAuthorization: Basic [REDACTED]'
    )
    assert decoded["args"]["cmd"] == "curl -H 'Cookie: [REDACTED]' https://[REDACTED]@h/x?token=[REDACTED]"


def test_pem_split_across_json_strings_keeps_the_json() -> None:
    doc = ["-----BEGIN RSA PRIVATE KEY-----\nMIIEabc", "tail\n-----END RSA PRIVATE KEY-----"]
    out = json.loads(redact_text(json.dumps(doc)))
    assert out[0] == "[REDACTED_PRIVATE_KEY]"
    assert "MIIE" not in json.dumps(out)


def test_redact_value() -> None:
    data = {
        "token": "plain-word",
        "max_tokens": 5,
        "password": 1234567,
        "pin_password": 42,
        "flag_token": True,
        "Authorization": "Basic x",
        "nested": [{"apiKey": "abc"}, ("Bearer abcdefghijk0123",)],
        "text": "key sk-proj-AbC123dEf456GhI789jKl012mNo345",
        "empty_secret": "",
        3: "password=hunter22",
    }
    assert redact_value(data) == {
        "token": "[REDACTED]",
        "max_tokens": 5,
        "password": "[REDACTED]",
        "pin_password": 42,
        "flag_token": True,
        "Authorization": "[REDACTED]",
        "nested": [{"apiKey": "[REDACTED]"}, ("Bearer [REDACTED]",)],
        "text": "key [REDACTED_API_KEY]",
        "empty_secret": "",
        3: "password=[REDACTED]",
    }


def test_redact_error_is_one_bounded_line() -> None:
    err = RuntimeError("failed\n  with token=abc123XYZ and\tmore " + "x" * 600)
    out = redact_error(err)
    assert "\n" not in out and "abc123XYZ" not in out and len(out) == 500 and out.endswith("…")
    assert redact_error(ValueError()) == "ValueError"
    assert redact_error("Bearer abcdefghijkl0123") == "Bearer [REDACTED]"


# -- regressions found by the property tests ------------------------------------------------------------
# Each (text, secret) once let ``secret`` through; the property test's random surroundings found
# them, these pin them so a later rule change cannot bring them back unnoticed.
SURVIVOR_REGRESSIONS = [
    # A cookie header swallowed a query value glued to the next header name: handing the whole
    # ``a000a000AUTHORIZATION`` back as "the name" released the value before it (CI failure).
    ("COOKIE:https://h.example/p?x=1&access_token=a000a000AUTHORIZATION:", "a000a000"),
    # The query rule took ``password:`` as the value of ``;AUTHORIZATION=`` and hid the pair.
    (";AUTHORIZATION=password: a000a000", "a000a000"),
    ("GET /x?auth=token: a0b1c2d3 HTTP/1.1", "a0b1c2d3"),
    # A torn PEM block stopped at ``_`` and left the tail of a glued token.
    ("-----BEGIN RSA PRIVATE KEY-----ghp_000000000000000000000000000000000000", "000000000000"),
    ("-----BEGIN PRIVATE KEY-----\nAIzaSy_0123456789abcdefghijklmnopqrstu", "0123456789abc"),
    # A quoted value ending in a secret word, then ``:`` and nothing: read as a ``"token":`` label.
    ('password = "a000aPASSWORD":', "a000aPASSWORD"),
    ('password = "a000aTOKEN":\nnext', "a000aTOKEN"),
    # Basic credentials that read as a secret name with ``:`` and nothing after were handed back.
    ("Authorization: Basic AUTHORIZATION00:", "AUTHORIZATION00"),
    ('password = "a000aSECRET":0', "a000aSECRET"),
    # A bearer run glued in front of a URL swallowed the scheme that marks its userinfo.
    ("Bearer AUTHORIZATIONpostgres://app:a000a000@db.internal:5432/main", "a000a000"),
]

# Redacting once must leave nothing for a second pass to change (found with the survivors above).
IDEMPOTENCE_REGRESSIONS = [
    ";AUTHORIZATION=token = os.environ['TOKEN']\n",
    "Authorization=token = os.environ['TOKEN']",
    ";AUTHORIZATION=&_password = get_password()",
    'AUTHORIZATION:"0Authorization: Basic 00000000000000 ""',
    "COOKIE: =AIza00000000000000000000000000000000000=",
    "Authorization:`0Authorization: Basic 00000000000000Authorization:`0",
]


def test_a_quoted_label_with_a_value_is_still_a_label() -> None:
    """The survivor fixes judge ``"name":`` with nothing after as a value, not every quoted name."""
    assert redact_text('password = "token": "abc123"') == 'password = "token": "[REDACTED]"'
    assert redact_text('Cookie: a=b; token="xyz"') == "Cookie: [REDACTED]"


@pytest.mark.parametrize("raw", IDEMPOTENCE_REGRESSIONS)
def test_property_idempotence_regressions(raw: str) -> None:
    once = redact_text(raw)
    assert redact_text(once) == once
    assert "00000000000000" not in once


@pytest.mark.parametrize(("raw", "secret"), SURVIVOR_REGRESSIONS)
def test_property_survivors_stay_redacted(raw: str, secret: str) -> None:
    out = redact_text(raw)
    assert secret not in out, out
    assert redact_text(out) == out
    assert secret not in json.loads(redact_text(json.dumps({"content": raw})))["content"]


def test_empty_and_plain() -> None:
    assert redact_text("") == ""
    assert redact_text("plain text") == "plain text"
    assert not contains_secret("")


# -- false positives on ordinary code ------------------------------------------------------------------

STDLIB_MODULES = [
    "urllib/request.py",
    "urllib/parse.py",
    "http/client.py",
    "http/cookiejar.py",
    "ftplib.py",
    "smtplib.py",
    "imaplib.py",
    "poplib.py",
    "netrc.py",
    "getpass.py",
    "hmac.py",
    "secrets.py",
    "tokenize.py",
    "shlex.py",
    "argparse.py",
    "json/encoder.py",
    "json/decoder.py",
    "pathlib.py",
    "shutil.py",
    "subprocess.py",
    "textwrap.py",
    "email/utils.py",
    "ssl.py",
    "xmlrpc/client.py",
    "logging/handlers.py",
    "typing.py",
    "dataclasses.py",
    "inspect.py",
    "ast.py",
    "configparser.py",
]
SRC = Path(__file__).resolve().parents[2] / "src" / "hindsight_hooks"


def _corpus() -> list[tuple[str, list[str]]]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = [stdlib / m for m in STDLIB_MODULES] + sorted(SRC.rglob("*.py"))
    return [(str(f), f.read_text(encoding="utf-8", errors="replace").splitlines()) for f in files if f.is_file()]


def test_false_positive_rate_on_ordinary_code() -> None:
    corpus = _corpus()
    assert len(corpus) >= len(STDLIB_MODULES)
    lines = changed = 0
    examples: list[str] = []
    started = time.perf_counter()
    for name, file_lines in corpus:
        for line in file_lines:
            lines += 1
            if redact_text(line) != line:
                changed += 1
                if len(examples) < 10:
                    examples.append(f"{Path(name).name}: {line.strip()[:100]}")
    rate = changed / lines
    print(
        f"\nredaction false positives: {changed}/{lines} lines = {rate:.4%} "
        f"({len(corpus)} files, {time.perf_counter() - started:.1f}s)"
    )
    for ex in examples:
        print("  ", ex)
    assert lines > 30000
    assert rate <= 0.01
