//! `--web.config.file`: TLS and basic authentication in the format of the Prometheus
//! exporter-toolkit (node_exporter's `--web.config.file`), so one file serves both.
//!
//! ```yaml
//! tls_server_config:
//!   cert_file: server.crt
//!   key_file: server.key
//!   client_auth_type: RequireAndVerifyClientCert
//!   client_ca_file: ca.crt
//!   min_version: TLS12
//! basic_auth_users:
//!   prometheus: $2y$10$...
//! ```
//!
//! Everything is read and checked at start: a file that cannot be read, a key that does not
//! fit its certificate, an unknown key, a password that is not a bcrypt hash, are errors
//! then, never a server that quietly speaks plain HTTP or lets anyone in.
//!
//! Afterwards, as the exporter-toolkit does, changes are picked up without a restart (a
//! certificate renewed by cert-manager or certbot, a password changed): the file and the
//! certificates it names are looked at again at most once per [`RECHECK`], when a
//! connection arrives, and read again when one of them changed. A change that does not
//! load (a half-written file, a key that does not fit) keeps the previous settings in force
//! and says why on stderr; so does one that would turn TLS on or off, which needs a restart.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};
use yaml_rust2::{Yaml, YamlLoader};

use crate::Error;

/// How often, at most, the files are looked at for changes.
pub const RECHECK: Duration = Duration::from_secs(1);

/// `--web.config.file`: the settings in force, read again when the files change.
pub struct WebConfig {
    path: PathBuf,
    state: Mutex<Loaded>,
}

struct Loaded {
    settings: Arc<WebSettings>,
    /// What the files looked like when `settings` (or a refused change) was read.
    stamps: Vec<Option<FileStamp>>,
    checked: Instant,
}

/// Enough of a file's metadata to see that it was replaced or rewritten.
#[derive(Debug, PartialEq, Eq)]
struct FileStamp {
    device: u64,
    inode: u64,
    len: u64,
    modified_ns: i128,
}

fn stamps(files: &[PathBuf]) -> Vec<Option<FileStamp>> {
    files
        .iter()
        .map(|file| {
            let meta = std::fs::metadata(file).ok()?;
            Some(FileStamp {
                device: meta.dev(),
                inode: meta.ino(),
                len: meta.len(),
                modified_ns: i128::from(meta.mtime()) * 1_000_000_000
                    + i128::from(meta.mtime_nsec()),
            })
        })
        .collect()
}

/// One reading of the file: TLS, basic authentication, or both.
pub(crate) struct WebSettings {
    pub(crate) tls: Option<Arc<ServerConfig>>,
    pub(crate) basic_auth: Option<BasicAuth>,
    client_certificates: ClientAuth,
    /// The configuration file and every file it names, watched for changes.
    files: Vec<PathBuf>,
}

/// The exporter-toolkit's `client_auth_type`, as far as it checks certificates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClientAuth {
    NoClientCert,
    VerifyClientCertIfGiven,
    RequireAndVerifyClientCert,
}

impl WebConfig {
    /// Reads and checks `path`. Relative paths in it are taken from the file's directory,
    /// as the exporter-toolkit does.
    pub fn load(path: &Path) -> Result<WebConfig, Error> {
        let settings = read(path).map_err(|reason| Error::WebConfig {
            path: path.to_path_buf(),
            reason,
        })?;
        Ok(WebConfig {
            path: path.to_path_buf(),
            state: Mutex::new(Loaded {
                stamps: stamps(&settings.files),
                settings: Arc::new(settings),
                checked: Instant::now(),
            }),
        })
    }

    /// The settings in force, read again first if a file changed since the last look
    /// (at most once per [`RECHECK`]).
    pub(crate) fn current(&self) -> Arc<WebSettings> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.checked.elapsed() < RECHECK {
            return Arc::clone(&state.settings);
        }
        state.checked = Instant::now();
        let now = stamps(&state.settings.files);
        if now == state.stamps {
            return Arc::clone(&state.settings);
        }
        // Also for a refused change: it is reported once, not at every connection.
        state.stamps = now;
        let refused = |why: &str| {
            pauselab_pause::eprintln_lossy!(
                "pauselab export: --web.config.file {}: {why}; the previous settings stay in force",
                self.path.display()
            )
        };
        match read(&self.path) {
            Err(reason) => refused(&reason),
            Ok(new) if new.tls.is_some() != state.settings.tls.is_some() => {
                refused("turning TLS on or off needs a restart")
            }
            Ok(new) => {
                // The files the new settings name, as they were when read.
                state.stamps = stamps(&new.files);
                state.settings = Arc::new(new);
                pauselab_pause::eprintln_lossy!(
                    "pauselab export: --web.config.file {} read again: {}",
                    self.path.display(),
                    state.settings.describe()
                );
            }
        }
        Arc::clone(&state.settings)
    }

    /// Whether connections are TLS (fixed at start).
    pub fn tls(&self) -> bool {
        self.current().tls.is_some()
    }

    /// A few words for the start-up line: what a client needs to get in.
    pub fn describe(&self) -> String {
        self.current().describe()
    }
}

fn read(path: &Path) -> Result<WebSettings, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let base = path.parent().unwrap_or(Path::new("."));
    let mut settings = parse(&text, base)?;
    settings.files.insert(0, path.to_path_buf());
    Ok(settings)
}

impl WebSettings {
    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.tls.is_some() {
            parts.push(match self.client_certificates {
                ClientAuth::NoClientCert => "TLS",
                ClientAuth::VerifyClientCertIfGiven => "TLS, client certificates verified if given",
                ClientAuth::RequireAndVerifyClientCert => "TLS, client certificate required",
            });
        }
        if self.basic_auth.is_some() {
            parts.push("basic auth");
        }
        parts.join(", ")
    }
}

const TOP_KEYS: &[&str] = &[
    "tls_server_config",
    "http_server_config",
    "basic_auth_users",
];
const TLS_KEYS: &[&str] = &[
    "cert_file",
    "key_file",
    "client_auth_type",
    "client_ca_file",
    "min_version",
    "max_version",
];
/// Keys of the exporter-toolkit this server does not implement: refused by name rather than
/// ignored, so nobody believes a cipher list or a header is in force when it is not.
const UNSUPPORTED_TLS_KEYS: &[&str] = &[
    "cert",
    "key",
    "client_ca",
    "cipher_suites",
    "curve_preferences",
    "prefer_server_cipher_suites",
    "client_allowed_sans",
];

fn parse(text: &str, base: &Path) -> Result<WebSettings, String> {
    let documents = YamlLoader::load_from_str(text).map_err(|e| format!("not YAML: {e}"))?;
    let root = match documents.as_slice() {
        [] => return Err(NOTHING_TO_DO.to_string()),
        [root] => root,
        _ => return Err("holds several YAML documents; write one".to_string()),
    };
    let top = mapping(root, "the file")?;
    check_keys(&top, TOP_KEYS, &[], "")?;
    let tls_section = top.get("tls_server_config").filter(|v| !v.is_null());
    let (tls, client_certificates, files) = match tls_section {
        Some(section) => {
            let (config, auth, files) = tls_config(section, base)?;
            (Some(Arc::new(config)), auth, files)
        }
        None => (None, ClientAuth::NoClientCert, Vec::new()),
    };
    if let Some(section) = top.get("http_server_config").filter(|v| !v.is_null()) {
        let http = mapping(section, "http_server_config")?;
        // HTTP/2 is never offered (ALPN): Prometheus scrapes over HTTP/1.1 either way.
        check_keys(&http, &["http2"], &["headers"], "http_server_config.")?;
    }
    let basic_auth = match top.get("basic_auth_users").filter(|v| !v.is_null()) {
        Some(users) => Some(BasicAuth::new(users)?),
        None => None,
    };
    if tls.is_none() && basic_auth.is_none() {
        return Err(NOTHING_TO_DO.to_string());
    }
    Ok(WebSettings {
        tls,
        basic_auth,
        client_certificates,
        files,
    })
}

const NOTHING_TO_DO: &str = "sets neither tls_server_config nor basic_auth_users \
     (leave out --web.config.file to serve plain HTTP)";

type Mapping<'a> = HashMap<&'a str, &'a Yaml>;

fn mapping<'a>(value: &'a Yaml, what: &str) -> Result<Mapping<'a>, String> {
    let hash = value
        .as_hash()
        .ok_or_else(|| format!("{what} must be a mapping of keys to values"))?;
    hash.iter()
        .map(|(key, value)| match key.as_str() {
            Some(key) => Ok((key, value)),
            None => Err(format!("{what}: keys must be text, not {key:?}")),
        })
        .collect()
}

fn check_keys(
    map: &Mapping,
    known: &[&str],
    unsupported: &[&str],
    prefix: &str,
) -> Result<(), String> {
    let mut keys: Vec<&&str> = map.keys().collect();
    keys.sort();
    for key in keys {
        if unsupported.contains(key) {
            return Err(format!(
                "{prefix}{key} is not supported by pauselab export; remove it"
            ));
        }
        if !known.contains(key) {
            return Err(format!(
                "unknown key {prefix}{key} (known here: {})",
                known.join(", ")
            ));
        }
    }
    Ok(())
}

fn text<'a>(map: &Mapping<'a>, key: &str) -> Result<Option<&'a str>, String> {
    match map.get(key) {
        None => Ok(None),
        Some(Yaml::Null) => Ok(None),
        Some(Yaml::String(s)) if s.is_empty() => Ok(None),
        Some(Yaml::String(s)) => Ok(Some(s)),
        Some(_) => Err(format!("tls_server_config.{key} must be text")),
    }
}

/// The TLS settings, and the files they were read from.
fn tls_config(
    section: &Yaml,
    base: &Path,
) -> Result<(ServerConfig, ClientAuth, Vec<PathBuf>), String> {
    let tls = mapping(section, "tls_server_config")?;
    check_keys(&tls, TLS_KEYS, UNSUPPORTED_TLS_KEYS, "tls_server_config.")?;
    let file = |key: &str| -> Result<Option<PathBuf>, String> {
        Ok(text(&tls, key)?.map(|p| base.join(p)))
    };
    let (Some(cert_file), Some(key_file)) = (file("cert_file")?, file("key_file")?) else {
        return Err("tls_server_config needs both cert_file and key_file".to_string());
    };
    let certificates = CertificateDer::pem_file_iter(&cert_file)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("cert_file {}: {e}", cert_file.display()))?;
    if certificates.is_empty() {
        return Err(format!(
            "cert_file {}: no PEM certificate in it",
            cert_file.display()
        ));
    }
    let key = PrivateKeyDer::from_pem_file(&key_file)
        .map_err(|e| format!("key_file {}: {e}", key_file.display()))?;

    let client_auth = match text(&tls, "client_auth_type")? {
        None | Some("NoClientCert") => ClientAuth::NoClientCert,
        Some("VerifyClientCertIfGiven") => ClientAuth::VerifyClientCertIfGiven,
        Some("RequireAndVerifyClientCert") => ClientAuth::RequireAndVerifyClientCert,
        // These accept a certificate without checking who signed it: no protection.
        Some(other @ ("RequestClientCert" | "RequireAnyClientCert" | "RequireClientCert")) => {
            return Err(format!(
                "client_auth_type {other} (a certificate nobody checks) is not supported; \
                 use RequireAndVerifyClientCert with client_ca_file"
            ))
        }
        Some(other) => return Err(format!("unknown client_auth_type {other}")),
    };
    let client_ca = file("client_ca_file")?;
    let files = [
        &Some(cert_file.clone()),
        &Some(key_file.clone()),
        &client_ca,
    ]
    .into_iter()
    .flatten()
    .cloned()
    .collect();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = match (client_auth, client_ca) {
        (ClientAuth::NoClientCert, None) => WebPkiClientVerifier::no_client_auth(),
        (ClientAuth::NoClientCert, Some(_)) => {
            return Err("client_ca_file is set but client_auth_type is not: \
                 set client_auth_type: RequireAndVerifyClientCert"
                .to_string())
        }
        (_, None) => {
            return Err(
                "client_auth_type verifies client certificates: set client_ca_file".to_string(),
            )
        }
        (auth, Some(ca_file)) => {
            let mut roots = RootCertStore::empty();
            let cas = CertificateDer::pem_file_iter(&ca_file)
                .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
                .map_err(|e| format!("client_ca_file {}: {e}", ca_file.display()))?;
            let (added, _) = roots.add_parsable_certificates(cas);
            if added == 0 {
                return Err(format!(
                    "client_ca_file {}: no usable CA certificate in it",
                    ca_file.display()
                ));
            }
            let builder =
                WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone());
            let builder = if auth == ClientAuth::VerifyClientCertIfGiven {
                builder.allow_unauthenticated()
            } else {
                builder
            };
            builder
                .build()
                .map_err(|e| format!("client_ca_file {}: {e}", ca_file.display()))?
        }
    };
    let min = version(text(&tls, "min_version")?, "min_version")?.unwrap_or(TlsVersion::Tls12);
    let max = version(text(&tls, "max_version")?, "max_version")?.unwrap_or(TlsVersion::Tls13);
    let versions: Vec<&'static rustls::SupportedProtocolVersion> = [
        (TlsVersion::Tls12, &rustls::version::TLS12),
        (TlsVersion::Tls13, &rustls::version::TLS13),
    ]
    .into_iter()
    .filter(|(v, _)| (min..=max).contains(v))
    .map(|(_, v)| v)
    .collect();
    if versions.is_empty() {
        return Err("min_version is above max_version".to_string());
    }
    let config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&versions)
        .map_err(|e| format!("tls_server_config: {e}"))?
        .with_client_cert_verifier(verifier)
        .with_single_cert(certificates, key)
        .map_err(|e| {
            format!(
                "cert_file {} with key_file {}: {e}",
                cert_file.display(),
                key_file.display()
            )
        })?;
    Ok((config, client_auth, files))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum TlsVersion {
    Tls12,
    Tls13,
}

fn version(value: Option<&str>, key: &str) -> Result<Option<TlsVersion>, String> {
    match value {
        None => Ok(None),
        Some("TLS12") => Ok(Some(TlsVersion::Tls12)),
        Some("TLS13") => Ok(Some(TlsVersion::Tls13)),
        Some(old @ ("TLS10" | "TLS11")) => Err(format!(
            "{key} {old}: TLS 1.0 and 1.1 are not offered; use TLS12 or TLS13"
        )),
        Some(other) => Err(format!("{key} {other}: use TLS12 or TLS13")),
    }
}

/// `basic_auth_users`: user names and the bcrypt hashes of their passwords.
///
/// bcrypt is slow on purpose (tens of milliseconds at cost 10), far more than a scrape
/// costs: a password once verified is remembered as an HMAC under a key made at start, so
/// the next scrapes with it cost a microsecond, and the password itself is not kept.
pub(crate) struct BasicAuth {
    hashes: HashMap<String, String>,
    remembered_key: ring::hmac::Key,
    /// Per user, the HMAC of the password last verified for them.
    remembered: Mutex<HashMap<String, ring::hmac::Tag>>,
}

/// What a request's credentials amount to without running bcrypt.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Remembered {
    /// The password verified earlier for this user.
    Allowed,
    /// Needs a bcrypt verification.
    Unknown,
}

impl BasicAuth {
    fn new(users: &Yaml) -> Result<BasicAuth, String> {
        let users = mapping(users, "basic_auth_users")?;
        let mut hashes = HashMap::new();
        for (user, hash) in users {
            let Some(hash) = hash.as_str() else {
                return Err(format!(
                    "basic_auth_users.{user} must be a bcrypt hash in quotes"
                ));
            };
            let valid = hash
                .parse::<bcrypt::HashParts>()
                .is_ok_and(|parts| (4..=31).contains(&parts.get_cost()));
            if !valid {
                return Err(format!(
                    "basic_auth_users.{user} is not a bcrypt hash ($2y$10$ and 53 characters; \
                     make one with `htpasswd -nBC 10 {user}`)"
                ));
            }
            hashes.insert(user.to_string(), hash.to_string());
        }
        if hashes.is_empty() {
            return Err("basic_auth_users has no users".to_string());
        }
        let rng = ring::rand::SystemRandom::new();
        let remembered_key = ring::hmac::Key::generate(ring::hmac::HMAC_SHA256, &rng)
            .map_err(|_| "the system gave no random bytes for a key".to_string())?;
        Ok(BasicAuth {
            hashes,
            remembered_key,
            remembered: Mutex::new(HashMap::new()),
        })
    }

    /// Whether `user` and `password` were verified before (constant time in the password).
    pub(crate) fn remembered(&self, user: &str, password: &[u8]) -> Remembered {
        let remembered = self.remembered.lock().unwrap_or_else(|p| p.into_inner());
        match remembered.get(user) {
            Some(tag)
                if ring::hmac::verify(&self.remembered_key, password, tag.as_ref()).is_ok() =>
            {
                Remembered::Allowed
            }
            _ => Remembered::Unknown,
        }
    }

    /// Verifies the password with bcrypt (slow, constant time in the password). An unknown
    /// user costs the same time as a known one, so response times do not tell which users
    /// exist.
    pub(crate) fn verify(&self, user: &str, password: &[u8]) -> bool {
        let (hash, known) = match self.hashes.get(user) {
            Some(hash) => (hash, true),
            None => match self.hashes.values().next() {
                Some(any) => (any, false),
                None => return false,
            },
        };
        let verified = bcrypt::verify(password, hash).unwrap_or(false) && known;
        if verified {
            let tag = ring::hmac::sign(&self.remembered_key, password);
            let mut remembered = self.remembered.lock().unwrap_or_else(|p| p.into_inner());
            remembered.insert(user.to_string(), tag);
        }
        verified
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn users(yaml: &str) -> Result<BasicAuth, String> {
        BasicAuth::new(&YamlLoader::load_from_str(yaml).unwrap()[0])
    }

    #[test]
    fn passwords_are_verified_then_remembered() {
        let hash = bcrypt::hash("right", 4).unwrap();
        let auth = users(&format!("prometheus: '{hash}'")).unwrap();
        assert_eq!(auth.remembered("prometheus", b"right"), Remembered::Unknown);
        assert!(!auth.verify("prometheus", b"wrong"));
        assert!(!auth.verify("nobody", b"right"));
        assert!(auth.verify("prometheus", b"right"));
        assert_eq!(auth.remembered("prometheus", b"right"), Remembered::Allowed);
        assert_eq!(auth.remembered("prometheus", b"wrong"), Remembered::Unknown);
        assert_eq!(auth.remembered("nobody", b"right"), Remembered::Unknown);
    }

    #[test]
    fn hashes_that_are_not_bcrypt_are_refused() {
        for hash in [
            "plain",
            "$1$abc$def",
            "$2y$99$abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNO",
        ] {
            let error = users(&format!("u: '{hash}'")).err().unwrap();
            assert!(
                error.contains("basic_auth_users.u is not a bcrypt hash"),
                "{error}"
            );
        }
        assert!(users("u: 12").is_err());
        assert!(users("{}").is_err());
    }

    #[test]
    fn configurations_that_protect_nothing_or_misspell_are_refused() {
        let base = Path::new("/nonexistent");
        let err = |yaml: &str| parse(yaml, base).err().unwrap();
        assert!(err("").contains("sets neither"));
        assert!(err("basic_auth_users:\n").contains("sets neither"));
        assert!(err("tls_server_config:\n  certfile: a\n")
            .contains("unknown key tls_server_config.certfile"));
        assert!(err("tls_server_config:\n  cipher_suites: [a]\n").contains("not supported"));
        assert!(err("tls_server_config:\n  key_file: k\n").contains("needs both"));
        assert!(err("tls_server_config:\n  cert_file: c\n  key_file: k\n")
            .contains("cert_file /nonexistent/c"));
        assert!(err("basic_auth: {}\n").contains("unknown key basic_auth"));
        assert!(err("[1, 2]").contains("mapping"));
        assert!(err("a: [").contains("not YAML"));
    }
}
