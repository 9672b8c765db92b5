"""Families of secrets that once survived redaction (issue 9 item 2, ADR-061), as classes.

Each class is a *rule*, not a list of strings: vendor token prefixes, webhook URLs, connection
strings, password flags of common command-line tools, base64 ``user:pass`` auth fields, a
credential after a spaced label, and a value that starts with its own key's name. Every class
has several held-out-style examples (shapes the rules were not written against verbatim), the
ordinary text that must survive next to them, and the idempotence property over all of them.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight_hooks.governance.redact import contains_secret, redact_text

HEX32 = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
HEX32B = "9a8b7c6d5e4f30211203f4e5d6c7b8a9"
B64_40 = "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdo"

# (class, text, the secret that must not survive)
FAMILIES: list[tuple[str, str, str]] = [
    # -- vendor prefixes ---------------------------------------------------------------------------
    (
        "slack-webhook",
        "curl -X POST https://hooks.slack.com/services/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",
        "Xk9fQ2mL8pR4vT6wY1zA3bC5",
    ),
    (
        "slack-webhook",
        'SLACK_URL="https://hooks.slack.com/services/TABCDEFGH/BZYXWVUTS1/aaaaBBBBccccDDDDeeeeFFFF"',
        "aaaaBBBBccccDDDDeeeeFFFF",
    ),
    (
        "slack-webhook",
        "hooks.slack.com/workflows/T0123ABCD/A0456EFGH/789012345678901234/Qw3rTy7UiOp1AsDfGh5JkL9z",
        "Qw3rTy7UiOp1AsDfGh5JkL9z",
    ),
    (
        "discord-webhook",
        "https://discord.com/api/webhooks/112233445566778899/Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh3iJk6lMn9oPq2rSt5uVw8xYz",
        "Ab3dEf6hIj9kLm2nOp5qRs8t",
    ),
    (
        "teams-webhook",
        "https://contoso.webhook.office.com/webhookb2/1f2e3d4c-aaaa-bbbb-cccc-0123456789ab@72f988bf-86f1-41af-91ab-2d7cd011db47/IncomingWebhook/"
        + HEX32
        + "/0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9",
        HEX32,
    ),
    (
        "discord-webhook",
        "DISCORD_HOOK=https://discordapp.com/api/webhooks/998877665544332211/Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa9Zy8Xw7Vu6Ts5Rq4Po3Nm2Lk1Ji0HgFe",
        "Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0",
    ),
    (
        "teams-webhook",
        "url: https://outlook.office.com/webhook/0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9@72f988bf-86f1-41af-91ab-2d7cd011db47/IncomingWebhook/"
        + HEX32B
        + "/1f2e3d4c-aaaa-bbbb-cccc-0123456789ab",
        HEX32B,
    ),
    (
        "pypi",
        "password = pypi-AgEIcHlwaS5vcmcCJGE4ZDk5YzE5LTc3YjItNDM5Mi1hN2UxLWQ0ZjM4MzgyYjQ2MAACKlszLCJhNTY3",
        "AgEIcHlwaS5vcmcCJGE4ZDk5YzE5",
    ),
    (
        "pypi",
        "twine upload -u __token__ -p pypi-AgENdGVzdC5weXBpLm9yZwIkN2Q3ZjFiOTItYjBjNS00ZWQxLTk2YjMtMWQ2ZWE5 dist/*",
        "AgENdGVzdC5weXBpLm9yZwIkN2Q3ZjFi",
    ),
    (
        "pypi",
        "token:pypi-AgEIcHlwaS5vcmcCJDY0NDMwNWVmLTI1MDQtNDFlNC1hOWU5LTA3ZmUwYmUyNWxxxxyyyyzzzz0000",
        "CJDY0NDMwNWVmLTI1MDQtNDFl",
    ),
    ("twilio-key", "Twilio API key SK" + HEX32 + " for the sms worker", "SK" + HEX32),
    ("twilio-key", "client = Client('SK" + HEX32B + "', api_secret)", HEX32B),
    (
        "sendgrid",
        "SG.aBcDeFgHiJkLmNoPqRsTuV.aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789abcdefg",
        "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
    ),
    (
        "sendgrid",
        'sg.send(key="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")',
        "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp",
    ),
    (
        "telegram",
        "https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1/sendMessage",
        "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1",
    ),
    ("telegram", "bot = Bot('5012345678:AAF-x9Yq2LmN3oP4qR5sT6uV7wX8yZ9a0bC')", "AAF-x9Yq2LmN3oP4qR5sT6uV7wX8yZ9a0bC"),
    ("vault", "VAULT hvs.CAESIJ0vcE1e2kC7rQd9kGmX8sY3Zq0pL4nT6wB5aH1cD2eF", "CAESIJ0vcE1e2kC7rQd9kGmX8sY3"),
    ("vault", "vault login hvb.AAAAAQJ7xq9kLmN2pR4sT6vW8yZ0aB1cD3eF5gH7jK9mN", "AAAAAQJ7xq9kLmN2pR4sT6vW8yZ0"),
    ("vault", "export VLT=s.Xk9fQ2mL8pR4vT6wY1zA3bC5 && vault kv get x", "Xk9fQ2mL8pR4vT6wY1zA3bC5"),
    ("mailgun", "requests.post(url, auth=('api', 'key-" + HEX32 + "'))", HEX32),
    ("mailgun", "MG key-" + HEX32B + " is the sending key", HEX32B),
    ("gitlab", "glptt-0123456789abcdefABCDEF0123456789abcdef glrt-Ab1Cd2Ef3Gh4Ij5Kl6Mn7", "0123456789abcdefABCDEF"),
    ("shopify", "shpat_" + HEX32 + " and more", HEX32),
    ("shopify", 'SHOPIFY_SECRET="shpss_' + HEX32B + '"', HEX32B),
    ("digitalocean", "dop_v1_" + HEX32 + HEX32B, HEX32 + HEX32B),
    ("digitalocean", "doctl auth init -t doo_v1_" + HEX32B + HEX32, HEX32B + HEX32),
    ("databricks", "host=x dapi" + HEX32 + "-2", "dapi" + HEX32),
    ("databricks", "databricks configure --token dapi" + HEX32B, HEX32B),
    (
        "google-oauth",
        "client secret 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 and ya29.a0AfH6SMBx1y2z3A4B5C6D7E8F9G0H1I2J3K4",
        "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",
    ),
    (
        "google-oauth",
        "access: ya29.a0AfH6SMBx1y2z3A4B5C6D7E8F9G0H1I2J3K4L5M6N7O8P9Q0",
        "a0AfH6SMBx1y2z3A4B5C6D7E8F9G0H1I2",
    ),
    (
        "age",
        "AGE-SECRET-KEY-1QQPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHCE6MU",
        "QQPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
    ),
    (
        "age",
        "# secret key: AGE-SECRET-KEY-1GFJ5NKHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2T",
        "GFJ5NKHCE6MUA7LQPZRY9X8GF2TVDW0S3JN",
    ),
    (
        "gitlab",
        "git clone https://gitlab-ci-token:gldt-Ab1Cd2Ef3Gh4Ij5Kl6Mn7o@gitlab.example.com/g/r.git",
        "Ab1Cd2Ef3Gh4Ij5Kl6Mn7o",
    ),
    ("misc-prefix", "lin_api_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz3Ab4C", "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0"),
    ("misc-prefix", "PMAK-0123456789abcdef01234567-0123456789abcdef0123456789abcdef01", "0123456789abcdef01234567-"),
    ("misc-prefix", "sbp_" + HEX32 + "01234567 and pul-" + HEX32 + "01234567", HEX32),
    ("misc-prefix", "xapp-1-A0123456789-1234567890123-" + HEX32, HEX32),
    ("misc-prefix", "gsk_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz3Ab4Cd5Ef6Gh7Ij", "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9"),
    ("misc-prefix", "LTAI5tAb1Cd2Ef3Gh4Ij5Kl6 is the alibaba id", "LTAI5tAb1Cd2Ef3Gh4Ij5Kl6"),
    ("azure-ad", "AZURE_CLIENT_CREDENTIAL=Ab12Q~Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Y", "Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0"),
    ("azure-ad", "the app secret is xYz7Q~abcdEFGH1234ijklMNOP5678qrstUVWX90", "abcdEFGH1234ijklMNOP5678"),
    # -- connection strings -------------------------------------------------------------------------
    (
        "connection-string",
        f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={B64_40}==;EndpointSuffix=core.windows.net",
        B64_40,
    ),
    (
        "connection-string",
        "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz3A=",
        "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9",
    ),
    (
        "connection-string",
        "Server=tcp:db.example.net,1433;Database=app;User ID=sa;Pwd=Hunter2xyz;Encrypt=True",
        "Hunter2xyz",
    ),
    ("connection-string", '"Data Source=db;Initial Catalog=app;User Id=app;Password=Tr0ub4dor&3;"', "Tr0ub4dor&3"),
    (
        "connection-string",
        "Driver={ODBC Driver 18};Server=db;UID=app;PWD=Sup3r Secret Pass;TrustServerCertificate=yes",
        "Sup3r Secret Pass",
    ),
    (
        "connection-string",
        "BlobEndpoint=https://a.blob.core.windows.net/;SharedAccessSignature=sv=2021-06-08&ss=b&sig=Ab1Cd2%2BEf3Gh4",
        "Ab1Cd2%2BEf3Gh4",
    ),
    # -- password flags of common command-line tools ---------------------------------------------------
    ("cli-password", "mysqldump -u root -p'S3cr3t!pw' shop > dump.sql", "S3cr3t!pw"),
    ("cli-password", "mysql -uroot -pS3cr3tpw -h db shop", "S3cr3tpw"),
    ("cli-password", 'mariadb -u app -p"Qx7!longpass" -e "select 1"', "Qx7!longpass"),
    ("cli-password", "sshpass -p 'Hunter2xyz' ssh deploy@host", "Hunter2xyz"),
    ("cli-password", "sshpass -p Hunter2xyz ssh deploy@host uptime", "Hunter2xyz"),
    ("cli-password", "az login -u me@example.com -p Sup3rSecret!", "Sup3rSecret!"),
    ("cli-password", "az login --service-principal -u app-id -p 'Ab1Q~cdefghijKLMN' --tenant t", "Ab1Q~cdefghijKLMN"),
    ("cli-password", "docker login -u deploy -p dckr_pat_Ab1Cd2Ef3Gh4 registry.example.com", "Ab1Cd2Ef3Gh4"),
    ("cli-password", "redis-cli -h cache -a 'r3dis!Pass' ping", "r3dis!Pass"),
    ("cli-password", "mongosh --host db -u admin -p m0ngoPass! --authenticationDatabase admin", "m0ngoPass!"),
    ("cli-password", "sqlcmd -S db -U sa -P 'Sql!Pass2022' -Q 'select 1'", "Sql!Pass2022"),
    ("cli-password", "ldapsearch -x -D cn=admin,dc=ex -w LdapPass99 -b dc=ex", "LdapPass99"),
    ("cli-password", "keytool -list -keystore ks.jks -storepass Ch4ngeIt!", "Ch4ngeIt!"),
    ("cli-password", "openssl pkcs12 -export -in c.pem -passout pass:Exp0rtPw -out c.p12", "Exp0rtPw"),
    ("cli-password", "curl -u admin:Adm1nPass! https://api.example.com/x", "Adm1nPass!"),
    ("cli-password", "curl --user 'ci-bot:T0k3nValue' https://example.com", "T0k3nValue"),
    ("cli-password", "PGPASSWORD=pgPass123 psql -h db -U app", "pgPass123"),
    ("cli-password", "MYSQL_PWD=myPw0rd77 mysql -u app", "myPw0rd77"),
    ("cli-password", "7z a -pArch1vePw -mhe=on backup.7z dir", "Arch1vePw"),
    ("cli-password", "sqlplus scott/T1gerPass@orcl", "T1gerPass"),
    ("cli-password", "smbclient //srv/share -U alice%Sm8Pass!", "Sm8Pass!"),
    # -- base64 user:pass auth fields ------------------------------------------------------------------
    ("auth-field", '{"auths":{"https://index.docker.io/v1/":{"auth":"dXNlcjpzM2NyZXRQYXNz"}}}', "dXNlcjpzM2NyZXRQYXNz"),
    (
        "auth-field",
        '{"auths": {"ghcr.io": {"auth": "Y2ktYm90OmdocF9BYmNkZWYxMjM0NTY="}}}',
        "Y2ktYm90OmdocF9BYmNkZWYxMjM0NTY=",
    ),
    ("auth-field", "_auth=YWRtaW46bnBtUGFzczEyMw==\nalways-auth=true", "YWRtaW46bnBtUGFzczEyMw=="),
    ("auth-field", "registry:\n  auth: ZGVwbG95OkhlbGxvV29ybGQ5OQ==\n", "ZGVwbG95OkhlbGxvV29ybGQ5OQ=="),
    # -- a credential after a spaced label -----------------------------------------------------------
    ("spaced-label", "Twilio auth token " + HEX32, HEX32),
    ("spaced-label", "The API key is " + HEX32B + ", rotate it monthly", HEX32B),
    ("spaced-label", "client secret xK9mQ2vL8pR4wT6yB3nZ", "xK9mQ2vL8pR4wT6yB3nZ"),
    # -- a value that starts with its own key's name ----------------------------------------------------
    ("name-prefixed-value", "DB_PASSWORD=password123", "password123"),
    ("name-prefixed-value", "token=tok1234567890", "tok1234567890"),
    ("name-prefixed-value", "password=Password2024", "Password2024"),
    ("name-prefixed-value", "secret=secret123456", "secret123456"),
    ("name-prefixed-value", "apikey: apikey98765", "apikey98765"),
    ("name-prefixed-value", "passwd=passwd1", "passwd1"),
]

FAMILY_IDS = [f"{cls}-{n}" for n, (cls, _, _) in enumerate(FAMILIES)]


@pytest.mark.parametrize(("cls", "raw", "secret"), FAMILIES, ids=FAMILY_IDS)
def test_family_member_is_redacted(cls: str, raw: str, secret: str) -> None:
    out = redact_text(raw)
    assert secret not in out, out
    assert contains_secret(raw)
    assert redact_text(out) == out, "idempotent"
    # Retained content is JSON text: the escapes neither hide the secret nor break the JSON.
    encoded = redact_text(json.dumps({"content": raw}))
    assert secret not in json.loads(encoded)["content"]


def test_every_class_has_at_least_two_examples() -> None:
    counts: dict[str, int] = {}
    for cls, _, _ in FAMILIES:
        counts[cls] = counts.get(cls, 0) + 1
    group = {"discord-webhook": "slack-webhook", "teams-webhook": "slack-webhook"}
    merged: dict[str, int] = {}
    for cls, n in counts.items():
        merged[group.get(cls, cls)] = merged.get(group.get(cls, cls), 0) + n
    assert all(n >= 2 for n in merged.values() if n), {c: n for c, n in merged.items() if n < 2}


# Ordinary text that sits next to each class and must survive.
KEPT_NEAR_FAMILIES = [
    "see https://hooks.slack.com/services/ for the webhook docs",
    "pip install pypi-simple and read https://pypi.org/project/pypi-server/",
    "SKU-12345 ships with TASK0f1e2d3c4b5a69788796a5b4c3d2e1f0",
    "msg = SG.Message(text)",
    "12:30:45 deploy took 1234567890:AB ms",
    "s.strip() and s.splitlines() and self.s.encode('utf-8')",
    "monkey-business and key-value stores, key-" + "f" * 8,
    "Password={password};Server={host}",
    "conn = f'Server={host};Database={db};Uid={user};Pwd={pwd};'",
    "AccountKey=<your account key>;EndpointSuffix=core.windows.net",
    "Pwd=${DB_PASSWORD};",
    "mysql -u root -p shop",
    "mysql -h db -P 3306 -u app -p",
    "docker run -p 8080:80 nginx",
    "ssh -p 2222 deploy@host",
    "redis-cli -h cache -p 6379 ping",
    "sshpass -f ~/.pw ssh deploy@host",
    'sshpass -p "$SSHPASS" ssh deploy@host',
    'mysqldump -u root -p"$MYSQL_PASSWORD" shop',
    "openssl enc -aes-256-cbc -pass env:ENC_PASS -in x",
    "openssl pkcs12 -passin file:pw.txt -in c.p12",
    'curl -u "$USER:$TOKEN" https://api.example.com',
    "curl -u admin https://api.example.com",
    "curl -X POST -d 'a=1' https://example.com",
    "cd $(pwd) && PWD=/home/dev/repo make",
    "MYSQL_PWD=$(cat /run/secrets/db) mysql",
    '"auth": "oauth2", "auth_method": "basic"',
    "auth = HTTPBasicAuth(user, password)",
    "auth: none",
    "token refresh happens hourly",
    "the API key is stored in the vault",
    "password = password",
    "token=tok",
    "secret = secrets.token_hex(16)",
    "max_tokens = 800000",
    "for token in tokens: print(token)",
]


@pytest.mark.parametrize("line", KEPT_NEAR_FAMILIES)
def test_ordinary_text_near_the_families_survives(line: str) -> None:
    assert redact_text(line) == line


@settings(max_examples=300, deadline=None)
@given(
    picks=st.lists(st.sampled_from(FAMILIES), min_size=1, max_size=3),
    lead=st.sampled_from(["", " ", "\n", '"', "'", "; ", "(", "`"]),
    between=st.sampled_from([" ", "\n", "; ", "\t", " | ", " && ", ", "]),
    tail=st.sampled_from(["", " ", "\n", '"', "'", ",", ";", ")", "."]),
)
def test_families_idempotent_and_hidden_in_combination(
    picks: list[tuple[str, str, str]], lead: str, between: str, tail: str
) -> None:
    """Members side by side, inside quotes, brackets and shell lists: still hidden, still idempotent.

    Separated by punctuation or space, not glued letter to letter: a tool name glued to a word is no
    command (``xmysql -p…``), and a body glued to more body (``SK<32 hex>x``) is no longer that shape.
    """
    text = lead + between.join(raw for _, raw, _ in picks) + tail
    once = redact_text(text)
    assert redact_text(once) == once
    for _, _, secret in picks:
        assert secret not in once, once


# -- counterexamples found while fuzzing these rules, pinned --------------------------------------------
FAMILY_SURVIVOR_REGRESSIONS = [
    # JSON text: the escaped line break glued ``\n`` to the tool name, which then read as ``nmysql``.
    (json.dumps({"content": "\nmysql -uroot -pa000a000 shop\n"}), "a000a000"),
    (json.dumps({"content": "\nMYSQL_PWD=a0b1c2d3 mysql\n"}), "a0b1c2d3"),
    # A connection-string value ran over the spaces to the next command's ``-p'…'`` and stopped at
    # its quote, leaving the password: only a value closed by ``;`` may hold spaces.
    (
        "BlobEndpoint=https://a.blob.core.windows.net/;SharedAccessSignature=sv=2021&sig=Ab1Cd2 "
        "mysqldump -u root -p'S3cr3t!pw' shop",
        "S3cr3t!pw",
    ),
    # A webhook path swallowed a glued tool name; the tool's flag must still be found after a break.
    (
        "https://hooks.slack.com/services/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\nsshpass -p Zz9yY8xX ssh h",
        "Zz9yY8xX",
    ),
    # Adversarial surroundings (names, separators and quotes glued around members, raw and JSON):
    # a JSON-escaped line break before a short prefix read as a letter gluing it to a word.
    (json.dumps({"c": "\nLTAI5tAb1Cd2Ef3Gh4Ij5Kl6 is the id"}), "LTAI5tAb1Cd2Ef3Gh4Ij5Kl6"),
    (json.dumps({"c": "\nSG.aBcDeFgHiJkLmNoPqRsTuV.aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789abcdefg"}), "0123456789"),
    (json.dumps({"c": "\nauth token " + HEX32}), HEX32),
    # A greedy value glued in front of a command took the tool name that marks its flags.
    (";Pwd=0(az login -u me@example.com -p Sup3rSecret!", "Sup3rSecret!"),
    ("\t;Pwd= sshpass -p 'Hunter2xyz' ssh deploy@host", "Hunter2xyz"),
    ("?token=(curl --user 'ci-bot:T0k3nValue' https://example.com", "T0k3nValue"),
    # A connection-string value ran into the next ``name:`` and took the name from its value.
    (';;Pwd= apikey: apikey98765"( ', "apikey98765"),
    # A weak value followed by a separator read as the next pair's name, or as a chained assignment.
    ("passwd=passwd1 :", "passwd1"),
    ("passwd=passwd1'=token: 0", "passwd1"),
    ("apikey: apikey98765 =DB_PASSWORD=", "apikey98765"),
    ("(0'token=tok1234567890 =;", "tok1234567890"),
    # Property run, seed 10 at 10x: an environment password took the next header's name.
    ("SSHPASS=Authorization: Basic 00000000000000", "00000000000000"),
    (json.dumps({"content": "SSHPASS=Authorization: Basic 00000000000000"}), "00000000000000"),
]


@pytest.mark.parametrize(("raw", "secret"), FAMILY_SURVIVOR_REGRESSIONS)
def test_family_survivors_stay_redacted(raw: str, secret: str) -> None:
    out = redact_text(raw)
    assert secret not in out, out
    assert redact_text(out) == out


# -- the value rules behind "a value that starts with its own key's name" -------------------------------
@pytest.mark.parametrize(
    "raw",
    [
        "password=SuperSecret123",
        "DB_PASSWORD=MySecretPass2024",
        "token: ghToken99",
        "PGPASSWORD=pgPass123 psql",
    ],
)
def test_words_with_a_trailing_number_are_weak_secrets(raw: str) -> None:
    """Camel humps or one word, lower case, a trailing number: an identifier's shape, a weak
    password's habit. Redacted (ADR-061)."""
    assert redact_text(raw).endswith(("[REDACTED]", "[REDACTED] psql")), redact_text(raw)


@pytest.mark.parametrize(
    "line",
    [
        "self.hide_cookie2 = hide_cookie2",  # snake_case with a number: a variable
        "password2 = password2",  # the variable the name is named after
        "connect(token=token, password2=password2)",
        "API_KEY = API_KEY_V2",  # an upper-case constant
        "secret_key = secretKey",  # camel humps without a number
        "token = tok",
    ],
)
def test_identifiers_next_to_the_weak_secret_rule_survive(line: str) -> None:
    assert redact_text(line) == line
