//! The scanner's corpus and behaviour tests. Every secret-shaped string is assembled at run
//! time from pieces and a seeded generator, so this file holds none: GitHub push protection,
//! `git pair push` and a review of this repository must find nothing here.

use super::*;

/// A small deterministic generator (xorshift), so positives look random but are reproducible.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick(&mut self, alphabet: &str, n: usize) -> String {
        let a = alphabet.as_bytes();
        (0..n)
            .map(|_| char::from(a[(self.next() % a.len() as u64) as usize]))
            .collect()
    }
}

const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const B64URL: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const HEX: &str = "0123456789abcdef";
const DIGITS: &str = "0123456789";
const BASE32: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

fn base64url(bytes: &[u8]) -> String {
    let a = B64URL.as_bytes();
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &b)| acc | (u32::from(b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(char::from(a[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

fn base64_std(bytes: &[u8]) -> String {
    let url = base64url(bytes).replace('-', "+").replace('_', "/");
    let pad = (4 - url.len() % 4) % 4;
    url + &"=".repeat(pad)
}

/// One positive: the text scanned, the secret in it, the kind it must be reported as.
struct Positive {
    kind: &'static str,
    text: String,
    secret: String,
}

fn pos(kind: &'static str, secret: String, template: &str) -> Positive {
    Positive {
        kind,
        text: template.replace("{}", &secret),
        secret,
    }
}

fn pem(g: &mut Gen, label: &str, lines: usize, sep: &str) -> (String, String) {
    let body: Vec<String> = (0..lines).map(|_| g.pick(B64, 64)).collect();
    let body = body.join(sep);
    let dashes = "-----";
    let text = format!("{dashes}BEGIN {label}{dashes}{sep}{body}{sep}{dashes}END {label}{dashes}");
    (text, body)
}

/// At least 30 synthetic secrets covering every kind the SPEC names.
fn positives() -> Vec<Positive> {
    let mut g = Gen(0x9e37_79b9_7f4a_7c15);
    let g = &mut g;
    let jwt = |g: &mut Gen| {
        format!(
            "{}.{}.{}",
            base64url(br#"{"alg":"HS256","typ":"JWT"}"#),
            base64url(br#"{"sub":"1234567890","name":"Ada","iat":1516239022}"#),
            g.pick(B64URL, 43)
        )
    };
    let (pem_rsa, rsa_body) = pem(g, &["RSA ", "PRIVATE KEY"].concat(), 6, "\n");
    let (pem_json, json_body) = pem(g, &["", "PRIVATE KEY"].concat(), 4, "\\n");
    let (pem_ssh, ssh_body) = pem(g, &["OPENSSH ", "PRIVATE KEY"].concat(), 5, "\n");
    let (pem_pgp, pgp_body) = pem(g, &["PGP ", "PRIVATE KEY BLOCK"].concat(), 5, "\r\n");
    let unterminated_body = g.pick(B64, 64) + "\n" + &g.pick(B64, 64);
    let unterminated = format!(
        "{}BEGIN EC {}-----\n{unterminated_body}",
        "-----", "PRIVATE KEY"
    );
    vec![
        pos("bearer", g.pick(B64URL, 40), "Authorization: Bearer {}"),
        pos(
            "bearer",
            g.pick(ALNUM, 32),
            "curl -H \"authorization: bearer {}\" https://api.internal/v1",
        ),
        pos(
            "bearer",
            g.pick(ALNUM, 24) + "." + &g.pick(ALNUM, 12),
            "2026-01-01T00:00:00Z GET /v1/items headers={'Authorization': 'Bearer {}'}",
        ),
        Positive {
            kind: "private-key",
            text: pem_rsa,
            secret: rsa_body,
        },
        Positive {
            kind: "private-key",
            text: format!("{{\"type\": \"service_account\", \"private_key\": \"{pem_json}\\n\"}}"),
            secret: json_body,
        },
        Positive {
            kind: "private-key",
            text: pem_ssh,
            secret: ssh_body,
        },
        Positive {
            kind: "private-key",
            text: format!("-- gpg export\r\n{pem_pgp}\r\n"),
            secret: pgp_body,
        },
        Positive {
            kind: "private-key",
            text: unterminated,
            secret: unterminated_body,
        },
        pos(
            "aws-access-key-id",
            ["AKIA", &g.pick(BASE32, 16)].concat(),
            "AWS_ACCESS_KEY_ID={}",
        ),
        pos(
            "aws-access-key-id",
            ["ASIA", &g.pick(BASE32, 16)].concat(),
            "\"aws_access_key_id\": \"{}\",",
        ),
        pos(
            "aws-secret-access-key",
            g.pick(B64, 40),
            "aws_secret_access_key = {}",
        ),
        pos(
            "aws-secret-access-key",
            g.pick(B64, 40),
            "  secretAccessKey: '{}'",
        ),
        pos(
            "github-token",
            ["ghp_", &g.pick(ALNUM, 36)].concat(),
            "GITHUB_TOKEN={}",
        ),
        pos(
            "github-token",
            ["gho_", &g.pick(ALNUM, 36)].concat(),
            "let t = \"{}\";",
        ),
        pos(
            "github-token",
            ["github_pat_", &g.pick(ALNUM, 22), "_", &g.pick(ALNUM, 59)].concat(),
            "gh auth login --with-token <<< {}",
        ),
        pos(
            "gitlab-token",
            ["glpat-", &g.pick(B64URL, 20)].concat(),
            "export GITLAB_TOKEN=\"{}\"",
        ),
        pos(
            "gitlab-token",
            [
                "glpat-",
                &g.pick(B64URL, 27),
                ".01.",
                &g.pick("abcdefghijklmnopqrstuvwxyz0123456789", 9),
            ]
            .concat(),
            "  token: \"{}\"",
        ),
        pos(
            "slack-token",
            [
                "xoxb-",
                &g.pick(DIGITS, 11),
                "-",
                &g.pick(DIGITS, 13),
                "-",
                &g.pick(ALNUM, 24),
            ]
            .concat(),
            "SLACK_BOT={}",
        ),
        pos(
            "slack-token",
            [
                "xapp-1-A",
                &g.pick(UPPER, 10),
                "-",
                &g.pick(DIGITS, 13),
                "-",
                &g.pick(HEX, 64),
            ]
            .concat(),
            "slack:\n  app_level: {}\n",
        ),
        pos(
            "npm-token",
            ["npm_", &g.pick(ALNUM, 36)].concat(),
            "//registry.npmjs.org/:_authToken={}",
        ),
        pos(
            "npm-token",
            ["npm_", &g.pick(ALNUM, 36)].concat(),
            "env:\n  NPM_TOKEN: {}\n",
        ),
        pos(
            "pypi-token",
            ["pypi-AgEIcHlwaS5vcmc", &g.pick(B64URL, 120)].concat(),
            "TWINE_PASSWORD={} twine upload dist/*",
        ),
        pos(
            "pypi-token",
            ["pypi-AgEIcHlwaS5vcmc", &g.pick(B64URL, 60)].concat(),
            "[pypi]\nusername = __token__\npassword = {}\n",
        ),
        pos(
            "openai-api-key",
            ["sk-", &g.pick(ALNUM, 20), "T3BlbkFJ", &g.pick(ALNUM, 20)].concat(),
            "OPENAI_API_KEY={}",
        ),
        pos(
            "openai-api-key",
            [
                "sk-proj-",
                &g.pick(B64URL, 74),
                "T3BlbkFJ",
                &g.pick(B64URL, 74),
            ]
            .concat(),
            "client = OpenAI(api_key=\"{}\")",
        ),
        pos(
            "openai-api-key",
            ["sk-svcacct-", &g.pick(B64URL, 64)].concat(),
            "key: {}",
        ),
        pos(
            "anthropic-api-key",
            ["sk-ant-api03-", &g.pick(B64URL, 93), "AA"].concat(),
            "ANTHROPIC_API_KEY={}",
        ),
        pos(
            "anthropic-api-key",
            ["sk-ant-admin01-", &g.pick(B64URL, 93), "AA"].concat(),
            "x-api-key: {}",
        ),
        pos(
            "google-api-key",
            ["AIza", &g.pick(B64URL, 35)].concat(),
            "<meta name=\"maps-key\" content=\"{}\">",
        ),
        pos(
            "google-api-key",
            ["AIza", &g.pick(B64URL, 35)].concat(),
            "const firebaseConfig = { apiKey: \"{}\", projectId: \"demo\" };",
        ),
        pos(
            "stripe-key",
            ["sk_", "live_", &g.pick(ALNUM, 24)].concat(),
            "Stripe.api_key = '{}'",
        ),
        pos(
            "stripe-key",
            ["rk_", "test_", &g.pick(ALNUM, 99)].concat(),
            "STRIPE_RESTRICTED={}",
        ),
        pos("jwt", jwt(g), "session=({}); Path=/"),
        pos("jwt", jwt(g), "Authorization: Bearer {}"),
        pos(
            "url-password",
            g.pick(ALNUM, 16),
            "DATABASE_URL=postgres://app:{}@db.internal:5432/app",
        ),
        pos(
            "url-password",
            g.pick(ALNUM, 12) + "!" + &g.pick(DIGITS, 3),
            "git clone https://deploy:{}@git.corp.net/team/repo.git",
        ),
        pos(
            "url-password",
            g.pick(ALNUM, 20),
            "broker_url = \"amqp://worker:{}@rabbit/vhost\"",
        ),
        pos(
            "generic-secret",
            g.pick(ALNUM, 20) + "#" + &g.pick(DIGITS, 2),
            "DB_PASSWORD={}",
        ),
        pos(
            "generic-secret",
            g.pick(ALNUM, 32),
            "  \"client_secret\": \"{}\",",
        ),
        pos("generic-secret", g.pick(ALNUM, 24), "\tapiKey := \"{}\""),
        pos(
            "generic-secret",
            g.pick(B64, 28),
            "  config[:auth_token] => '{}'",
        ),
        pos("generic-secret", g.pick(ALNUM, 18), "$apikey = '{}';"),
        pos(
            "generic-secret",
            g.pick(ALNUM, 30),
            "spring:\n  credentials: {}\n",
        ),
        pos("generic-secret", g.pick(HEX, 40), "export API_TOKEN={}"),
        pos("generic-secret", g.pick(B64, 44), "[core]\nsecret = {}\n"),
    ]
}

/// At least 30 look-alikes, none of which may be flagged.
fn look_alikes() -> Vec<(&'static str, String)> {
    let commit = "3f786850e387550fdab836ed7e6dc881de23001b";
    let sha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    let sha512 = "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce\
                  47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e";
    let fox = base64_std(b"The quick brown fox jumps over the lazy dog, twice.");
    let aws_doc_secret = ["wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYEXAMPLEKEY"].concat();
    let lines: Vec<(&str, String)> = vec![
        ("src/a.rs", format!("commit {commit}")),
        ("data.json", format!("\"sha\": \"{commit}\",")),
        ("x.diff", "index 3f78685..e69de29 100644".to_owned()),
        (
            "log.txt",
            "request_id: 123e4567-e89b-12d3-a456-426614174000".to_owned(),
        ),
        (
            "a.py",
            "auth_request_id = \"123e4567-e89b-12d3-a456-426614174000\"".to_owned(),
        ),
        (
            "a.yml",
            "token_uuid: 550e8400-e29b-41d4-a716-446655440000".to_owned(),
        ),
        (
            "a.toml",
            "session_token = \"550e8400-e29b-41d4-a716-446655440000\"".to_owned(),
        ),
        ("SHA256SUMS", format!("{sha256}  git-pair-x86_64.tar.gz")),
        ("BUILD", format!("checksum = \"sha256:{sha256}\"")),
        ("SHA512SUMS", format!("{sha512}  release.zip")),
        ("cfg.py", format!("secret_sha256 = \"{sha256}\"")),
        ("cfg.py", format!("token_commit = \"{commit}\"")),
        ("a.py", format!("auth_message = \"{fox}\"")),
        ("README.md", "password=changeme".to_owned()),
        ("README.md", "password: <your-password>".to_owned()),
        ("README.md", "token=${TOKEN}".to_owned()),
        ("README.md", "api_key=example-key-here".to_owned()),
        (
            "docs/aws.md",
            "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE".to_owned(),
        ),
        (
            "docs/aws.md",
            format!("aws_secret_access_key = {aws_doc_secret}"),
        ),
        (
            "src/auth.ts",
            "const authenticationTokenProvider = createProvider()".to_owned(),
        ),
        (
            "README.md",
            "see https://github.com/org/repo/blob/main/x.md".to_owned(),
        ),
        (
            "README.md",
            "git clone https://user@host.corp.net/path/repo.git".to_owned(),
        ),
        (
            "compose.yml",
            "DATABASE_URL: postgres://user:${DB_PASSWORD}@db/app".to_owned(),
        ),
        ("run.sh", "mysql://root:$MYSQL_PWD@db/app".to_owned()),
        (
            "app.py",
            "password = os.environ[\"DB_PASSWORD\"]".to_owned(),
        ),
        ("nlp.py", "tokens = self.tokenizer.encode(text)".to_owned()),
        (
            "nlp.py",
            "tokenizer = AutoTokenizer.from_pretrained(\"bert-base-uncased\")".to_owned(),
        ),
        ("README.md", "Authorization: Bearer <token>".to_owned()),
        ("ci.yml", "Authorization: Bearer ${GITHUB_TOKEN}".to_owned()),
        (
            "README.md",
            "Authorization: Bearer YOUR_ACCESS_TOKEN_HERE".to_owned(),
        ),
        ("chart.yaml", "secret: \"{{ .Values.secret }}\"".to_owned()),
        ("run.bat", "set password=%DB_PASSWORD%".to_owned()),
        (
            "tests/fixtures.py",
            "api_key = \"fake-api-key-for-tests-1234\"".to_owned(),
        ),
        (
            "tests/a.py",
            "password = \"test-Password-123456\"".to_owned(),
        ),
        ("a.env", "password = \"xxxxxxxxxxxxxxxx\"".to_owned()),
        ("a.yml", "password: '****************'".to_owned()),
        ("a.yml", "token: aaaaaaaaaaaaaaaaaaaa".to_owned()),
        (
            "pem.rs",
            format!(
                "const BEGIN: &str = \"-----BEGIN RSA {}-----\";",
                "PRIVATE KEY"
            ),
        ),
        (
            "a.js",
            ["stripe('sk_", "test_xxxxxxxxxxxxxxxxxxxxxxxx')"].concat(),
        ),
        ("a.sh", ["GH=ghp_", &"x".repeat(36)].concat()),
        (
            "package.json",
            "\"resolved\": \"https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz\"".to_owned(),
        ),
        (
            "users.sql",
            "password_hash = '$2b$12$KIXQJz0Q8vYF3r8o7w5mUeZ1bK9J6yFZ2pQe7cY1Zx3tLr8pQv5aK'"
                .to_owned(),
        ),
        (
            "AUTHORS",
            "author = \"Jane Q. Public <jane@corp.net>\"".to_owned(),
        ),
        ("cfg.yml", "auth_timeout_ms: 1234567890123".to_owned()),
        (
            "src/reset.rs",
            "let passwordResetTokenExpiryDuration = Duration::from_secs(3600);".to_owned(),
        ),
        (
            "config/secrets.yml",
            "secret_key_base: <%= ENV[\"SECRET_KEY_BASE\"] %>".to_owned(),
        ),
        (
            "a.yml",
            "token_url: https://oauth2.googleapis.com/token".to_owned(),
        ),
        (".env", "AUTH_DOMAIN=auth.corp-services.net".to_owned()),
        (
            "settings.py",
            "client_secret = settings.OAUTH_CLIENT_SECRET_V2".to_owned(),
        ),
        (
            "rfc.md",
            "Bearer authentication is described in RFC 6750.".to_owned(),
        ),
        ("a.json", "\"password\": \"\",".to_owned()),
        (
            "a.py",
            "url = \"https://example.com:8443/path@v2\"".to_owned(),
        ),
        ("a.sh", "git push git@github.com:org/repo.git".to_owned()),
        (
            "package-lock.json",
            format!("\"integrity\": \"sha512-{}\",", base64_std(&[7u8; 64])),
        ),
        (
            "yarn.lock",
            format!("  integrity sha512-{}", base64_std(&[9u8; 64])),
        ),
        (
            "web/app.js",
            format!("integrity=\"sha384-{}\"", base64_std(&[3u8; 48])),
        ),
        ("Cargo.lock", format!("checksum = \"{sha256}\"")),
        (
            "a.go",
            "if token == \"\" { return errMissingToken }".to_owned(),
        ),
        (
            "a.ts",
            "const token = await getAccessToken(credentials);".to_owned(),
        ),
        (
            "a.md",
            "| `auth` | string | the auth scheme, e.g. `Basic` |".to_owned(),
        ),
        ("a.yml", "auth_email: jane.doe@corp-mail.net".to_owned()),
        ("a.yml", "secret: MY_SECRET_KEY_V2".to_owned()),
        ("a.yml", "auth_provider: google-oauth2-v3".to_owned()),
        (
            "a.env",
            "TOKEN_ISSUER=https://login.corp.net/tenant-42/v2.0".to_owned(),
        ),
        ("a.env", "password_env: DB_PASSWORD_2024".to_owned()),
        (
            "ca-bundle.crt",
            format!(
                "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----",
                base64_std(&[1u8; 96])
            ),
        ),
        (
            "netlink.rs",
            "pub const NL80211_AUTHTYPE_MAX: nl80211_auth_type = nl80211_auth_type::FILS_PK;"
                .to_owned(),
        ),
        (
            "nl80211.h",
            "NL80211_AUTHTYPE_MAX = __NL80211_AUTHTYPE_NUM - 1,".to_owned(),
        ),
        ("myers.rs", "token_idx1: token_idx1_forward,".to_owned()),
        (
            "receiver.rs",
            "let tokens = self.0.to_token_stream();".to_owned(),
        ),
        ("lib.rs", "let tokens = quote_spanned! {span=>".to_owned()),
        (
            "COPYING",
            "cvs://:pserver:anoncvs@sources.redhat.com:/cvs/src".to_owned(),
        ),
        (
            "onboarding.md",
            "[`author-ready`]: doc/contributing/guide.md#author-ready-pull-requests".to_owned(),
        ),
        (
            "test_oauth.py",
            "\"oauth_token_secret=secret%3Dpassword&oauth_token=lock%26key\",".to_owned(),
        ),
        (
            "url.rs",
            "parse(\"http://user:pass%20word@example.com/path\")".to_owned(),
        ),
    ];
    lines
}

fn scanner() -> Scanner {
    Scanner::builtin()
}

#[test]
fn the_shipped_table_is_valid_when_compiled_at_once() {
    // The shipped table is compiled pattern by pattern on first use, unvalidated: this is
    // the validation a `pair.secretsFile` override gets at load.
    let table = super::table::compile(
        super::BUILTIN_TABLE,
        "data/secrets.json",
        super::table::When::Now,
    )
    .expect("the shipped table compiles");
    assert!(table.rules.len() >= 16);
}

#[test]
fn the_shipped_table_compiles_and_covers_every_kind_of_the_spec() {
    let s = scanner();
    let kinds = s.kinds();
    for kind in [
        "bearer",
        "private-key",
        "aws-access-key-id",
        "aws-secret-access-key",
        "github-token",
        "gitlab-token",
        "slack-token",
        "npm-token",
        "pypi-token",
        "openai-api-key",
        "anthropic-api-key",
        "google-api-key",
        "stripe-key",
        "jwt",
        "url-password",
        "generic-secret",
    ] {
        assert!(kinds.contains(&kind), "{kind} missing from {kinds:?}");
    }
}

#[test]
fn every_positive_is_found_with_its_kind_and_line() {
    let s = scanner();
    let corpus = positives();
    assert!(corpus.len() >= 30);
    for p in &corpus {
        let findings = s.scan("src/config.txt", p.text.as_bytes());
        assert_eq!(
            findings.iter().map(|f| f.kind.as_str()).collect::<Vec<_>>(),
            [p.kind],
            "in {:?}",
            p.text
        );
        let f = &findings[0];
        let found = &p.text[f.range.clone()];
        assert!(
            found.contains(&p.secret),
            "range {found:?} misses the secret in {:?}",
            p.text
        );
        // A key is reported on its BEGIN line, anything else where the secret starts.
        let anchor = if p.kind == "private-key" {
            "-----BEGIN"
        } else {
            &p.secret
        };
        let start = p.text.find(anchor).expect("the secret is in the text");
        let line = 1 + p.text[..start].matches('\n').count();
        assert_eq!(f.line, line, "{:?}", p.text);
        assert_eq!(f.path, "src/config.txt");
        assert_eq!(f.origin, Origin::Text);
    }
    // Every kind of the shipped table is exercised, twice at least.
    for kind in s.kinds() {
        let n = corpus.iter().filter(|p| p.kind == kind).count();
        assert!(n >= 2, "{n} positive(s) for {kind}");
        println!("{kind}: {n}");
    }
    println!(
        "positives: {}, look-alikes: {}",
        corpus.len(),
        look_alikes().len()
    );
}

#[test]
fn no_look_alike_is_flagged() {
    let s = scanner();
    let corpus = look_alikes();
    assert!(corpus.len() >= 30);
    let mut flagged = Vec::new();
    for (path, text) in &corpus {
        for f in s.scan(path, text.as_bytes()) {
            flagged.push(format!("{} ({text})", f.describe()));
        }
    }
    assert!(
        flagged.is_empty(),
        "flagged look-alikes:\n{}",
        flagged.join("\n")
    );
}

#[test]
fn all_positives_in_one_file_are_found_on_their_lines() {
    let s = scanner();
    let corpus = positives();
    let text: String = corpus.iter().map(|p| format!("{}\n", p.text)).collect();
    let findings = s.scan("all.txt", text.as_bytes());
    assert_eq!(findings.len(), corpus.len(), "{findings:?}");
    for (p, f) in corpus.iter().zip(&findings) {
        assert_eq!(f.kind, p.kind);
        let anchor = if p.kind == "private-key" {
            "-----BEGIN"
        } else {
            &p.secret
        };
        let start =
            text.find(&p.text).expect("text present") + p.text.find(anchor).expect("anchor");
        assert_eq!(f.line, 1 + text[..start].matches('\n').count());
    }
}

#[test]
fn redaction_leaves_no_secret_and_keeps_the_line_count() {
    let s = scanner();
    for p in positives() {
        let (out, findings) = s.redact("a.txt", &p.text);
        assert_eq!(findings.len(), 1, "{:?}", p.text);
        assert!(!out.contains(&p.secret), "{out}");
        assert!(out.contains(&format!("[REDACTED:{}]", p.kind)), "{out}");
        assert_eq!(
            out.matches('\n').count(),
            p.text.matches('\n').count(),
            "{out}"
        );
        // Redacting the redacted text finds nothing more.
        assert_eq!(s.redact("a.txt", &out).1, vec![], "{out}");
    }
}

#[test]
fn findings_never_show_the_secret_in_debug_display_or_json() {
    let s = scanner();
    for p in positives() {
        for f in s.scan("a.txt", p.text.as_bytes()) {
            let shown = [
                format!("{f:?}"),
                format!("{f:#?}"),
                f.to_string(),
                f.describe(),
                serde_json::to_string(&f).expect("serializes"),
            ];
            for text in shown {
                assert!(!text.contains(&p.secret), "{text}");
                // Not even a recognisable part of it.
                assert!(
                    !text.contains(&p.secret[..12.min(p.secret.len())]),
                    "{text}"
                );
            }
        }
    }
}

#[test]
fn describe_is_kind_path_and_line() {
    let s = scanner();
    let text = format!("a=1\nb=2\nkey={}{}\n", "AKIA", "QWERTYUIOPASDF23");
    let f = s.scan(".env", text.as_bytes());
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].describe(), "aws-access-key-id in .env:3");
    assert_eq!(
        serde_json::to_value(&f[0]).expect("json"),
        serde_json::json!({"kind": "aws-access-key-id", "rule": "aws-access-key-id",
            "path": ".env", "line": 3, "origin": "text"})
    );
}

#[test]
fn the_inline_marker_allows_its_line_only() {
    let s = scanner();
    let token = ["ghp_", &Gen(7).pick(ALNUM, 36)].concat();
    let text = format!("a = \"{token}\"  # git-pair:allow-secret\nb = \"{token}\"\n");
    let f = s.scan("a.py", text.as_bytes());
    assert_eq!(f.iter().map(|f| f.line).collect::<Vec<_>>(), [2]);
}

#[test]
fn placeholder_words_drop_human_values_not_random_tokens_that_hold_them_by_chance() {
    let s = scanner();
    let mut g = Gen(17);
    // A key body is never a placeholder, whatever letters it happens to hold.
    let (key, _) = pem(&mut g, &["RSA ", "PRIVATE KEY"].concat(), 4, "\n");
    let key = key.replacen('\n', "\nxxxxxSampleDummyEXAMPLE", 2);
    assert_eq!(kinds(&s, &key), ["private-key"]);
    // A stop-word inside a random run of letters does not drop a token.
    let bearer = format!(
        "Authorization: Bearer {}qTest{}",
        g.pick(ALNUM, 30),
        g.pick(ALNUM, 30)
    );
    assert_eq!(kinds(&s, &bearer), ["bearer"]);
    let secret = format!(
        "client_secret = \"{}qmock{}\"",
        g.pick(ALNUM, 12),
        g.pick(ALNUM, 12)
    );
    assert_eq!(kinds(&s, &secret), ["generic-secret"]);
    // Where it starts a word, it does.
    for text in [
        format!("client_secret = \"mock-{}\"", g.pick(ALNUM, 16)),
        format!(
            "client_secret = \"{}_TEST_{}\"",
            g.pick(ALNUM, 8),
            g.pick(ALNUM, 8)
        ),
        format!("Authorization: Bearer Fake{}", g.pick(ALNUM, 30)),
    ] {
        assert_eq!(kinds(&s, &text), Vec::<String>::new(), "{text}");
    }
}

fn kinds(s: &Scanner, text: &str) -> Vec<String> {
    s.scan("a", text.as_bytes())
        .into_iter()
        .map(|f| f.kind)
        .collect()
}

#[test]
fn allowlisted_paths_are_not_scanned() {
    let s = scanner();
    let token = ["ghp_", &Gen(8).pick(ALNUM, 36)].concat();
    for path in [
        "Cargo.lock",
        "web/yarn.lock",
        "package-lock.json",
        "a/b/pnpm-lock.yaml",
        "go.sum",
        "img/logo.png",
        "vendor/x/y.go",
        "third/vendor/x.js",
        "web/node_modules/pkg/index.js",
    ] {
        assert!(s.skips_path(path), "{path}");
        assert_eq!(s.scan(path, token.as_bytes()), vec![], "{path}");
    }
    for path in ["src/lock.rs", "locked.txt", "src/vendors.rs", "png.md"] {
        assert!(!s.skips_path(path), "{path}");
        assert_eq!(s.scan(path, token.as_bytes()).len(), 1, "{path}");
    }
}

#[test]
fn overlapping_matches_are_one_finding_named_by_the_more_specific_rule() {
    let s = scanner();
    let token = ["ghp_", &Gen(9).pick(ALNUM, 36)].concat();
    let cases = [
        (format!("github_token = \"{token}\""), "github-token"),
        (format!("Authorization: Bearer {token}"), "github-token"),
        (
            format!("https://x-access-token:{token}@github.com/o/r"),
            "github-token",
        ),
    ];
    for (text, kind) in cases {
        let f = s.scan("a", text.as_bytes());
        assert_eq!(
            f.iter().map(|f| f.kind.as_str()).collect::<Vec<_>>(),
            [kind],
            "{text}"
        );
        assert!(text[f[0].range.clone()].contains(&token));
    }
}

#[test]
fn non_utf8_text_is_scanned_bytewise_without_panicking() {
    let s = scanner();
    let mut text = b"\xff\xfe garbage \xc3(\n".to_vec();
    text.extend_from_slice(["AKIA", "QWERTYUIOPASDF23"].concat().as_bytes());
    text.extend_from_slice(b" \x80\x81 token=\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\n");
    let f = s.scan("bin", &text);
    assert_eq!(
        f.iter()
            .map(|f| (f.kind.as_str(), f.line))
            .collect::<Vec<_>>(),
        [("aws-access-key-id", 2)]
    );
    // Arbitrary bytes around keywords never panic.
    let mut g = Gen(42);
    for _ in 0..200 {
        let n = (g.next() % 300) as usize;
        let mut bytes: Vec<u8> = (0..n).map(|_| g.next() as u8).collect();
        let kw: &[&[u8]] = &[
            b"token=",
            b"-----BEGIN RSA PRIVATE KEY-----",
            b"://a:",
            b"@",
            b"Bearer ",
            b"\n+",
            b"eyJ",
        ];
        for _ in 0..4 {
            let at = (g.next() % (bytes.len() as u64 + 1)) as usize;
            let k = kw[(g.next() % kw.len() as u64) as usize];
            bytes.splice(at..at, k.iter().copied());
        }
        let _ = s.scan("fuzz", &bytes);
        let _ = s.scan_diff(&bytes);
        let _ = s.redact_diff_bytes(&bytes);
        let lossy = String::from_utf8_lossy(&bytes);
        let _ = s.redact("fuzz", &lossy);
        let _ = s.redact_diff(&lossy);
    }
}

#[test]
fn redaction_of_a_str_replaces_whole_characters() {
    let s = scanner();
    let pw = format!("{}é{}", Gen(3).pick(ALNUM, 12), Gen(4).pick(ALNUM, 6));
    let text = format!("db = \"postgres://app:{pw}@db/x\"\n");
    let (out, f) = s.redact("a", &text);
    assert_eq!(f.len(), 1);
    assert_eq!(
        out,
        "db = \"postgres://app:[REDACTED:url-password]@db/x\"\n"
    );
}

#[test]
fn a_secret_that_spells_part_of_its_own_marker_is_still_replaced() {
    // Found by the secrets fuzz target: the output then holds `REDAC` only inside
    // `[REDACTED:url-password]`, the redactor's own text; the password itself is gone.
    let s = scanner();
    let password = ["RE", "DAC"].concat(); // assembled: this file holds no secret
    let text = format!("db = \"postgres://app:{password}@db.internal/x\"\n");
    let (out, f) = s.redact("a", &text);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].kind, "url-password");
    assert_eq!(
        out,
        "db = \"postgres://app:[REDACTED:url-password]@db.internal/x\"\n"
    );
}

fn diff_of(path: &str, lines: &[&str]) -> String {
    let mut d = format!(
        "diff --git a/{path} b/{path}\nindex 1111111..2222222 100644\n--- a/{path}\n+++ b/{path}\n"
    );
    d.push_str(&format!("@@ -10,{} +20,{} @@ fn x()\n", 3, 4));
    for l in lines {
        d.push_str(l);
        d.push('\n');
    }
    d
}

#[test]
fn diff_findings_carry_the_new_path_and_line_and_removed_lines_the_old_ones() {
    let s = scanner();
    let aws = ["AKIA", "QWERTYUIOPASDF23"].concat();
    let gh = ["ghp_", &Gen(10).pick(ALNUM, 36)].concat();
    let jwt = format!(
        "{}.{}.{}",
        base64url(b"{\"alg\":\"none\"}"),
        base64url(b"{\"sub\":\"a-user\"}"),
        Gen(11).pick(B64URL, 20)
    );
    let mut diff = String::from("From: someone\nSubject: t\n\n");
    diff.push_str(&diff_of(
        "cfg/app.env",
        &[
            " context line",
            &format!("-OLD={aws}"),
            &format!("+NEW={gh}"),
            &format!(" ctx={jwt}"),
            "+plain",
        ],
    ));
    diff.push_str(&format!(
        "diff --git a/old.txt b/new.txt\nsimilarity index 80%\nrename from old.txt\nrename to new.txt\n--- a/old.txt\n+++ b/new.txt\n@@ -1,2 +1,2 @@\n-x={aws}\n+y=1\n keep\n"
    ));
    let f = s.scan_diff(diff.as_bytes());
    let got: Vec<String> = f.iter().map(Finding::describe).collect();
    assert_eq!(
        got,
        [
            "aws-access-key-id in cfg/app.env:11 (removed line)",
            "github-token in cfg/app.env:21",
            "jwt in cfg/app.env:22",
            "aws-access-key-id in old.txt:1 (removed line)",
        ]
    );
    assert_eq!(
        f.iter().map(|f| f.origin).collect::<Vec<_>>(),
        [
            Origin::Removed,
            Origin::Added,
            Origin::Context,
            Origin::Removed
        ]
    );
    let (out, f2) = s.redact_diff(&diff);
    assert_eq!(f, f2);
    for secret in [&aws, &gh, &jwt] {
        assert!(!out.contains(secret.as_str()));
    }
    assert!(out.contains("\n+NEW=[REDACTED:github-token]\n"));
    assert_eq!(out.lines().count(), diff.lines().count());
}

#[test]
fn secrets_outside_hunks_are_redacted_and_named_by_diff_line() {
    let s = scanner();
    let gh = ["ghp_", &Gen(12).pick(ALNUM, 36)].concat();
    let diff = format!(
        "commit message mentions {gh}\ndiff --git a/a.bin b/a.bin\nindex 1..2 100644\nBinary files a/a.bin and b/a.bin differ\nnote {gh}\n"
    );
    let (out, f) = s.redact_diff(&diff);
    assert!(!out.contains(&gh), "{out}");
    assert_eq!(
        f.iter().map(Finding::describe).collect::<Vec<_>>(),
        [
            "github-token in diff (diff line 1)",
            "github-token in a.bin (diff line 5)"
        ]
    );
}

#[test]
fn a_private_key_added_in_a_diff_is_redacted_keeping_the_plus_markers() {
    let s = scanner();
    let mut g = Gen(13);
    let (key, body) = pem(&mut g, &["RSA ", "PRIVATE KEY"].concat(), 4, "\n");
    let added: Vec<String> = key.lines().map(|l| format!("+{l}")).collect();
    let refs: Vec<&str> = added.iter().map(String::as_str).collect();
    let diff = diff_of("keys/id_rsa", &refs).replace("@@ -10,3 +20,4 @@", "@@ -0,0 +1,6 @@");
    let (out, f) = s.redact_diff(&diff);
    assert_eq!(
        f.iter().map(Finding::describe).collect::<Vec<_>>(),
        ["private-key in keys/id_rsa:1"]
    );
    for line in body.lines() {
        assert!(!out.contains(line));
    }
    assert_eq!(out.lines().count(), diff.lines().count());
    let tail: Vec<&str> = out.lines().skip(5).collect();
    assert_eq!(
        tail,
        [
            &format!(
                "+-----BEGIN RSA {}-----[REDACTED:private-key]",
                "PRIVATE KEY"
            ) as &str,
            "+",
            "+",
            "+",
            "+",
            "+"
        ]
    );
}

#[test]
fn diff_sections_of_skipped_paths_are_left_alone() {
    let s = scanner();
    let gh = ["ghp_", &Gen(14).pick(ALNUM, 36)].concat();
    let diff = diff_of("Cargo.lock", &[&format!("+x = \"{gh}\"")])
        + &diff_of("src/a.rs", &[&format!("+x = \"{gh}\"")]);
    let (out, f) = s.redact_diff(&diff);
    assert_eq!(
        f.iter().map(Finding::describe).collect::<Vec<_>>(),
        ["github-token in src/a.rs:20"]
    );
    assert_eq!(out.matches(&gh).count(), 1);
}

#[test]
fn quoted_paths_and_crlf_lines_in_a_diff() {
    let s = scanner();
    let gh = ["ghp_", &Gen(15).pick(ALNUM, 36)].concat();
    let diff = format!(
        "diff --git \"a/conf/na\\303\\257ve.env\" \"b/conf/na\\303\\257ve.env\"\r\n\
         index 1111111..2222222 100644\r\n\
         --- \"a/conf/na\\303\\257ve.env\"\r\n\
         +++ \"b/conf/na\\303\\257ve.env\"\r\n\
         @@ -1,2 +1,2 @@\r\n\
         \x20a=1\r\n\
         -b=2\r\n\
         +b={gh}\r\n"
    );
    let (out, f) = s.redact_diff(&diff);
    assert_eq!(
        f.iter().map(Finding::describe).collect::<Vec<_>>(),
        ["github-token in conf/naïve.env:2"]
    );
    assert!(out.ends_with("+b=[REDACTED:github-token]\r\n"), "{out}");
    let plain = diff
        .replace("\"a/conf/na\\303\\257ve.env\"", "a/conf/x.env")
        .replace("\"b/conf/na\\303\\257ve.env\"", "b/conf/x.env");
    assert_eq!(
        s.scan_diff(plain.as_bytes())
            .iter()
            .map(Finding::describe)
            .collect::<Vec<_>>(),
        ["github-token in conf/x.env:2"]
    );
}

#[test]
fn a_diff_without_headers_is_located_by_diff_line() {
    let s = scanner();
    let gh = ["ghp_", &Gen(16).pick(ALNUM, 36)].concat();
    let text = format!("just some text\nwith {gh}\n");
    let f = s.scan_diff(text.as_bytes());
    assert_eq!(
        f.iter().map(Finding::describe).collect::<Vec<_>>(),
        ["github-token in diff (diff line 2)"]
    );
    assert_eq!(s.scan_diff(b""), vec![]);
    assert_eq!(s.redact_diff(""), (String::new(), vec![]));
}

#[test]
fn bad_override_tables_are_errors_naming_the_file_and_the_fault() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rule = |extra: &str| {
        format!(
            r#"{{"v": 1, "rules": [{{"id": "x", "keywords": ["ab"], "regex": "ab(c)"{extra}}}]}}"#
        )
    };
    let cases: Vec<(String, &str)> = vec![
        ("{".to_owned(), "EOF while parsing"),
        (r#"{"v": 2, "rules": []}"#.to_owned(), "\"v\" must be 1, got 2"),
        (r#"{"v": 1, "rules": []}"#.to_owned(), "\"rules\" is empty"),
        (rule(r#", "secret_group": 2"#), "rule \"x\": secret_group 2 but the regex has 1 group(s)"),
        (rule(r#", "min_entopy": 2"#), "unknown field `min_entopy`"),
        (rule(r#", "min_entropy": 9"#), "min_entropy must be between 0 and 8"),
        (rule(r#", "kind": "Bad Kind""#), "kind \"Bad Kind\" must be lowercase"),
        (rule(r#", "allow_context": ["a"]"#), "allow_context needs context_group"),
        (
            r#"{"v": 1, "rules": [{"id": "x", "keywords": ["ab"], "regex": "ab("}]}"#.to_owned(),
            "rule \"x\": regex:",
        ),
        (
            r#"{"v": 1, "rules": [{"id": "x", "keywords": [], "regex": "ab"}]}"#.to_owned(),
            "\"keywords\" is empty",
        ),
        (
            r#"{"v": 1, "rules": [{"id": "x", "keywords": ["a"], "regex": "a"}, {"id": "x", "keywords": ["a"], "regex": "a"}]}"#.to_owned(),
            "rule \"x\" appears twice",
        ),
        (
            r#"{"v": 1, "rules": [{"id": "x", "keywords": ["a"], "regex": "a"}], "allowlist": {"values": ["("]}}"#.to_owned(),
            "allowlist.values",
        ),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let path = dir.path().join(format!("secrets-{i}.json"));
        std::fs::write(&path, text).expect("write");
        let err = Scanner::load(Some(&path)).expect_err(text).to_string();
        assert!(err.contains(&path.display().to_string()), "{err}");
        assert!(err.contains(want), "{err} lacks {want}");
    }
    let missing = dir.path().join("missing.json");
    let err = Scanner::load(Some(&missing))
        .expect_err("missing")
        .to_string();
    assert!(
        err.starts_with("cannot read secret patterns file") && err.contains("missing.json"),
        "{err}"
    );
}

#[test]
fn an_override_table_replaces_the_shipped_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("secrets.json");
    std::fs::write(
        &path,
        r#"{"v": 1, "rules": [{"id": "internal-token", "keywords": ["itk_"], "regex": "\\bitk_[a-z0-9]{16}\\b"}]}"#,
    )
    .expect("write");
    let s = Scanner::load(Some(&path)).expect("loads");
    assert_eq!(s.kinds(), ["internal-token"]);
    let text = format!(
        "a={}{}\nb={}{}",
        "itk_", "0123456789abcdef", "AKIA", "QWERTYUIOPASDF23"
    );
    assert_eq!(
        s.scan("a", text.as_bytes())
            .iter()
            .map(Finding::describe)
            .collect::<Vec<_>>(),
        ["internal-token in a:1"]
    );
    assert_eq!(
        Scanner::load(None).expect("builtin").kinds(),
        scanner().kinds()
    );
}

#[test]
fn this_module_and_its_table_hold_no_secret() {
    let s = scanner();
    let files = [
        ("data/secrets.json", BUILTIN_TABLE),
        ("src/secrets/mod.rs", include_str!("mod.rs")),
        ("src/secrets/table.rs", include_str!("table.rs")),
        ("src/secrets/diff.rs", include_str!("diff.rs")),
        ("src/secrets/tests.rs", include_str!("tests.rs")),
        (
            "benches/secrets.rs",
            include_str!("../../benches/secrets.rs"),
        ),
    ];
    for (path, text) in files {
        let found: Vec<String> = s
            .scan(path, text.as_bytes())
            .iter()
            .map(Finding::describe)
            .collect();
        assert!(found.is_empty(), "{found:?}");
    }
}

#[test]
fn entropy_and_base64_helpers() {
    assert_eq!(shannon_entropy(b""), 0.0);
    assert_eq!(shannon_entropy(b"aaaa"), 0.0);
    assert!((shannon_entropy(b"abcd") - 2.0).abs() < 1e-9);
    assert!(is_base64_of_text(
        base64_std(b"hello there, general kenobi").as_bytes()
    ));
    assert!(!is_base64_of_text(
        base64_std(b"user:hunter2hunter2").as_bytes()
    ));
    assert!(!is_base64_of_text(Gen(5).pick(B64, 40).as_bytes()));
}

#[test]
fn a_mapped_redaction_moves_offsets_past_each_marker() {
    let s = scanner();
    let gh = ["ghp_", &Gen(21).pick(ALNUM, 36)].concat();
    let (key, _) = pem(&mut Gen(22), &["EC ", "PRIVATE KEY"].concat(), 3, "\n");
    let mut lines = vec![format!("+a = \"{gh}\""), " keep".to_owned()];
    lines.extend(key.lines().map(|l| format!("+{l}")));
    lines.push(" tail".to_owned());
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let diff = diff_of("src/a.rs", &refs);
    let r = s
        .redact_diff_mapped(diff.as_bytes())
        .expect("secrets found");
    let (plain, findings) = s.redact_diff_bytes(diff.as_bytes());
    assert_eq!(r.text, plain);
    assert_eq!(r.findings, findings);
    assert_eq!(r.findings.len(), 2);
    // Every line start outside a secret lands on the same line's start in the output.
    let text = String::from_utf8(r.text.clone()).expect("UTF-8");
    for needle in [" keep\n", " tail\n", "@@ -10"] {
        let old = diff.find(needle).expect("in the diff");
        let new = text.find(needle).expect("in the output");
        assert_eq!(r.map_offset(old), new, "{needle:?}");
    }
    assert_eq!(r.map_offset(0), 0);
    assert_eq!(r.map_offset(diff.len()), text.len());
    // Inside a secret: the end of its marker.
    let inside = diff.find(&gh).expect("secret") + 3;
    let marker_end =
        text.find("[REDACTED:github-token]").expect("marker") + "[REDACTED:github-token]".len();
    assert_eq!(r.map_offset(inside), marker_end);
    // Nothing found: nothing to redact, nothing copied.
    assert_eq!(s.redact_diff_mapped(b"diff --git a/x b/x\n"), None);
}

#[test]
fn bytes_and_json_are_redacted_without_breaking_them() {
    let s = scanner();
    let gh = ["ghp_", &Gen(23).pick(ALNUM, 36)].concat();
    let (out, f) = s.redact_bytes("out.txt", format!("one\nuse {gh} here\n").as_bytes());
    assert_eq!(out, b"one\nuse [REDACTED:github-token] here\n");
    assert_eq!(f[0].describe(), "github-token in out.txt:2");
    let mut value = serde_json::json!({
        "argv": ["reviewer", format!("--key={gh}")],
        "nested": {"text": format!("said {gh}"), "n": 3},
    });
    let found = s.redact_json("attempts.json", &mut value);
    assert_eq!(found.len(), 2);
    assert_eq!(value["argv"][1], "--key=[REDACTED:github-token]");
    assert_eq!(value["nested"]["text"], "said [REDACTED:github-token]");
    assert_eq!(value["nested"]["n"], 3);
}
