//! Reading images from their registries (`lint --inspect-images`): the manifest (an index gives
//! the platform's), the config (Entrypoint, Cmd, Env, WorkingDir), then the layers, top first and
//! only until the entrypoint's file is found, and that file's Go build info.
//!
//! Facts are cached as JSON by digest under the cache directory, so a second run asks the registry
//! for no blob; a tag's digest is kept for [`TAG_TTL`]. Every request has a timeout, each layer a
//! size cap, and a failure is the image's error message, never the run's end.
//!
//! Credentials come from the Docker config, as `docker` and `crane` read them: an `auths` entry
//! of `$DOCKER_CONFIG/config.json` (else `~/.docker/config.json`), or the credential helper that
//! `credHelpers` or `credsStore` names. They are sent as HTTP Basic credentials when the
//! registry's `/v2/` asks for Basic authentication, or exchanged for a bearer token when it names
//! a token service; without any, images are read anonymously.

use super::layers::{self, Found};
use super::{buildinfo, GoSummary, ImageFacts, Runtime};
use futures_util::StreamExt;
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::errors::{OciDistributionError, OciErrorCode};
use oci_client::manifest::{ImageIndexEntry, OciDescriptor};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference, RegistryOperation};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How long a tag's digest is trusted before the registry is asked again.
pub const TAG_TTL: Duration = Duration::from_secs(10 * 60);

/// The PATH of an image config without one (Docker's default).
const DEFAULT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// The platform read from a multi-platform image when nothing says which.
pub const DEFAULT_PLATFORM: &str = "linux/amd64";

/// Symbolic links followed from the entrypoint to its file.
const MAX_LINKS: usize = 8;

/// How images are read.
#[derive(Debug, Clone)]
pub struct Options {
    /// Use the cache only; an image not in it is an error.
    pub offline: bool,
    /// `os/arch[/variant]` picked from an index.
    pub platform: String,
    /// Registries (host or host:port) read over plain HTTP besides the loopback ones.
    pub insecure: Vec<String>,
    /// Where facts are cached; None: no cache.
    pub cache_dir: Option<PathBuf>,
    /// The timeout of each request (connecting, and each read).
    pub timeout: Duration,
    /// The most compressed bytes read of one layer.
    pub layer_cap: u64,
    /// Images read at once.
    pub concurrency: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            offline: false,
            platform: DEFAULT_PLATFORM.to_string(),
            insecure: Vec::new(),
            cache_dir: default_cache_dir(),
            timeout: Duration::from_secs(30),
            layer_cap: 512 << 20,
            concurrency: 4,
        }
    }
}

/// `$GOLINT_K8S_CACHE` when set, else the platform's cache directory with `golint-k8s` below it.
pub fn default_cache_dir() -> Option<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = env("GOLINT_K8S_CACHE") {
        return Some(dir);
    }
    let base = if cfg!(target_os = "macos") {
        env("HOME").map(|h| h.join("Library").join("Caches"))
    } else if cfg!(windows) {
        env("LOCALAPPDATA")
    } else {
        env("XDG_CACHE_HOME").or_else(|| env("HOME").map(|h| h.join(".cache")))
    };
    base.map(|b| b.join("golint-k8s"))
}

/// `reference` pinned to `digest`: its registry and repository, the tag dropped.
pub fn pin(reference: &str, digest: &str) -> Option<String> {
    let r = Reference::try_from(reference).ok()?;
    Some(
        Reference::with_digest(
            r.registry().to_string(),
            r.repository().to_string(),
            digest.to_string(),
        )
        .whole(),
    )
}

/// Inspect every reference (at most [`Options::concurrency`] at once) and say what each gave.
/// References that are not registry images (`ko://…`, templates) are left out.
pub fn inspect_all(refs: &[String], opts: &Options) -> HashMap<String, Result<ImageFacts, String>> {
    let parsed: Vec<(String, Reference)> = refs
        .iter()
        .filter(|r| !r.contains("://") && !r.contains("{{") && !r.contains('$'))
        .filter_map(|r| Some((r.clone(), Reference::try_from(r.as_str()).ok()?)))
        .collect();
    // What the cache answers needs no runtime, client or credentials: a warm run, and the
    // language server (always offline), start none of them.
    let mut answers = HashMap::new();
    let mut asked = Vec::new();
    for (text, reference) in parsed {
        match cached(&reference, opts) {
            Cached::Facts(f) => {
                answers.insert(text, Ok(f));
            }
            Cached::Digest(d) if opts.offline => {
                let why = format!("--offline, and the facts of {d} are not in the cache");
                answers.insert(text, Err(why));
            }
            Cached::Nothing if opts.offline => {
                let why = "--offline, and the image's digest is not in the cache".to_string();
                answers.insert(text, Err(why));
            }
            Cached::Digest(d) => asked.push((text, reference, Some(d))),
            Cached::Nothing => asked.push((text, reference, None)),
        }
    }
    if asked.is_empty() {
        return answers;
    }
    // The TLS provider of the process (ring), once; a second install is refused harmlessly.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            let why = format!("cannot start the I/O runtime: {e}");
            answers.extend(asked.into_iter().map(|(r, _, _)| (r, Err(why.clone()))));
            return answers;
        }
    };
    let client = client(asked.iter().map(|(_, r, _)| r), opts);
    // One look-up per registry that is asked.
    let mut creds: HashMap<String, Credentials> = HashMap::new();
    for (_, r, _) in &asked {
        let registry = r.resolve_registry();
        if !creds.contains_key(registry) {
            creds.insert(registry.to_string(), credentials(registry, opts.timeout));
        }
    }
    let anonymous = Credentials {
        auth: RegistryAuth::Anonymous,
        said: String::new(),
    };
    let read = runtime.block_on(async {
        futures_util::stream::iter(asked)
            .map(|(text, reference, digest)| {
                let client = &client;
                let creds = creds
                    .get(reference.resolve_registry())
                    .unwrap_or(&anonymous);
                async move {
                    // Every request has its timeout; this bounds the image as a whole.
                    let deadline = opts.timeout.saturating_mul(8);
                    let facts = match tokio::time::timeout(
                        deadline,
                        inspect(client, &reference, digest, creds, opts),
                    )
                    .await
                    {
                        Ok(r) => r,
                        Err(_) => Err(format!("gave up after {}s", deadline.as_secs())),
                    };
                    let facts = match facts {
                        Err(text) if is_refusal(&text) => {
                            Err(token_refusal(client, &reference, creds)
                                .await
                                .unwrap_or(text))
                        }
                        facts => facts,
                    };
                    (text, facts)
                }
            })
            .buffer_unordered(opts.concurrency.max(1))
            .collect::<Vec<_>>()
            .await
    });
    answers.extend(read);
    answers
}

/// How requests to one registry authenticate.
#[derive(Clone)]
struct Credentials {
    auth: RegistryAuth,
    /// Said when the registry refuses access (401, 403): which credentials were sent, or why none.
    said: String,
}

/// The Docker config's credentials for `registry` (host or host:port, `index.docker.io` for
/// Docker Hub). A credential helper is a program, which may wait for a prompt or a keyring:
/// waited for at most `timeout`.
fn credentials(registry: &str, timeout: Duration) -> Credentials {
    use docker_credential::{CredentialRetrievalError as E, DockerCredential as C};
    let (tx, rx) = std::sync::mpsc::channel();
    let keys = config_keys(registry);
    // Left behind when it does not answer in time; the process's end ends it.
    let _ = std::thread::Builder::new()
        .name("docker-credentials".into())
        .spawn(move || {
            let _ = tx.send(first_credential(&keys, docker_credential::get_credential));
        });
    let anonymous = |said: String| Credentials {
        auth: RegistryAuth::Anonymous,
        said,
    };
    match rx.recv_timeout(timeout) {
        Ok(Ok(C::UsernamePassword(user, password))) => Credentials {
            auth: RegistryAuth::Basic(user.clone(), password),
            said: format!("the Docker config's credentials for {registry} (user {user}) were sent"),
        },
        Ok(Ok(C::IdentityToken(_))) => anonymous(format!(
            "the Docker config holds an identity token for {registry}, which is not supported; \
             the image was read anonymously"
        )),
        Ok(Err(E::NoCredentialConfigured | E::ConfigNotFound | E::ConfigReadError)) => {
            anonymous(format!(
                "no credentials for {registry} in the Docker config \
                 ($DOCKER_CONFIG/config.json or ~/.docker/config.json)"
            ))
        }
        Ok(Err(e)) => anonymous(format!(
            "the Docker config's credentials for {registry} could not be had ({}); the image \
             was read anonymously",
            one_line(&e.to_string())
        )),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => anonymous(format!(
            "the credential helper for {registry} did not answer within {}s; the image was \
             read anonymously",
            timeout.as_secs()
        )),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => anonymous(format!(
            "reading the Docker config's credentials for {registry} failed; the image was read \
             anonymously"
        )),
    }
}

/// The names the Docker config may keep a registry's credentials under, in the order asked.
/// Docker Hub's are kept under its v1 index URL: `docker login` writes them there, and Docker asks
/// a credential helper (`credsStore`, `credHelpers`) for that URL, so the host alone misses them.
fn config_keys(registry: &str) -> Vec<String> {
    if matches!(
        registry,
        "index.docker.io" | "docker.io" | "registry-1.docker.io"
    ) {
        vec![
            "https://index.docker.io/v1/".to_string(),
            "index.docker.io".to_string(),
        ]
    } else {
        vec![registry.to_string()]
    }
}

type CredentialError = docker_credential::CredentialRetrievalError;

/// The first key's credentials that `get` finds; when none has any, the first failure that says
/// more than "nothing configured".
fn first_credential(
    keys: &[String],
    get: impl Fn(&str) -> Result<docker_credential::DockerCredential, CredentialError>,
) -> Result<docker_credential::DockerCredential, CredentialError> {
    use docker_credential::CredentialRetrievalError as E;
    let mut failure = None;
    for key in keys {
        match get(key) {
            Ok(c) => return Ok(c),
            Err(E::NoCredentialConfigured) => {}
            Err(e) => {
                failure.get_or_insert(e);
            }
        }
    }
    Err(failure.unwrap_or(E::NoCredentialConfigured))
}

/// Text on one line, at most 300 characters: registries' error bodies can be HTML pages.
fn one_line(text: &str) -> String {
    let s = text.split_whitespace().collect::<Vec<_>>().join(" ");
    // A body is the registry's to choose: no escape sequence reaches the terminal.
    let mut s = crate::text::printable(&s).into_owned();
    if s.len() > 300 {
        s.truncate(crate::text::floor_char_boundary(&s, 300));
        s.push('…');
    }
    s
}

/// An error with its causes: "error sending request" says little without "Connection refused".
fn with_causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let c_text = c.to_string();
        if !text.contains(&c_text) {
            text.push_str(": ");
            text.push_str(&c_text);
        }
        cause = c.source();
    }
    text
}

/// Whether an image's error says the registry refused access (see [`registry_error`]).
fn is_refusal(text: &str) -> bool {
    text.starts_with("registry ") && text.contains(" refused access (")
}

/// Why the token service refused, when it did. The client falls back to an unauthenticated
/// request when the token exchange fails, so the registry's own 401 hides the reason ("incorrect
/// username or password"): asked again, only after a refusal.
async fn token_refusal(
    client: &Client,
    reference: &Reference,
    creds: &Credentials,
) -> Option<String> {
    match client
        .auth(reference, &creds.auth, RegistryOperation::Pull)
        .await
    {
        Err(e @ OciDistributionError::AuthenticationFailure(_)) => {
            Some(registry_error(&e, reference.resolve_registry(), creds))
        }
        _ => None,
    }
}

/// The message of a token service's error body: Docker Hub's `details`, or the `message` or
/// `error` field of others, else the body itself.
fn token_service_message(body: &str) -> String {
    let said = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            ["details", "message", "error_description", "error"]
                .iter()
                .find_map(|k| v[k].as_str().map(str::to_string))
                .or_else(|| v["errors"][0]["message"].as_str().map(str::to_string))
        });
    one_line(&said.unwrap_or_else(|| body.to_string()))
}

/// What a registry's answer means to the user: refused (401, 403: with what credentials), not
/// there (404), or the error as the client gives it.
fn registry_error(e: &OciDistributionError, registry: &str, creds: &Credentials) -> String {
    // The path of a URL on the registry: its host is said already.
    let path = |url: &str| match url.split_once("://") {
        Some((_, rest)) => rest.find('/').map_or(rest, |i| &rest[i..]).to_string(),
        None => url.to_string(),
    };
    let refused =
        |how: String| format!("registry {registry} refused access ({how}): {}", creds.said);
    match e {
        OciDistributionError::UnauthorizedError { url } => {
            refused(format!("HTTP 401 Unauthorized for {}", path(url)))
        }
        OciDistributionError::AuthenticationFailure(reason) => refused(format!(
            "its token service said: {}",
            token_service_message(reason)
        )),
        OciDistributionError::ServerError { code, url, message } => {
            let message = one_line(message);
            let detail = if message.is_empty() {
                String::new()
            } else {
                format!(": {message}")
            };
            match code {
                401 | 403 => refused(format!("HTTP {code} for {}{detail}", path(url))),
                404 => format!("registry {registry}: not found (HTTP 404): {}", path(url)),
                _ => format!("registry {registry}: HTTP {code} for {}{detail}", path(url)),
            }
        }
        OciDistributionError::RegistryError { envelope, url } => {
            let said: Vec<String> = envelope
                .errors
                .iter()
                .map(|e| {
                    let code = serde_json::to_value(&e.code)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_else(|| format!("{:?}", e.code));
                    format!("{code}: {}", one_line(&e.message))
                })
                .collect();
            let said = said.join("; ");
            let denied = envelope
                .errors
                .iter()
                .any(|e| matches!(e.code, OciErrorCode::Denied | OciErrorCode::Unauthorized));
            let missing = envelope.errors.iter().any(|e| {
                matches!(
                    e.code,
                    OciErrorCode::ManifestUnknown
                        | OciErrorCode::NameUnknown
                        | OciErrorCode::BlobUnknown
                        | OciErrorCode::NotFound
                )
            });
            if denied {
                refused(format!("{said} for {}", path(url)))
            } else if missing {
                format!("registry {registry}: not found: {said} ({})", path(url))
            } else {
                format!("registry {registry}: {said} ({})", path(url))
            }
        }
        e => format!("registry {registry}: {}", with_causes(e)),
    }
}

/// Whether a registry is reached over plain HTTP: loopback, or named by `--insecure-registry`.
fn plain_http(registry: &str, insecure: &[String]) -> bool {
    let host = match registry.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(rest),
        None => registry.split(':').next().unwrap_or(registry),
    };
    matches!(host, "127.0.0.1" | "localhost" | "::1")
        || insecure.iter().any(|i| i == registry || i == host)
}

fn client<'r>(refs: impl Iterator<Item = &'r Reference>, opts: &Options) -> Client {
    let plain: Vec<String> = refs
        .map(|r| r.resolve_registry().to_string())
        .filter(|r| plain_http(r, &opts.insecure))
        .collect();
    let platform = opts.platform.clone();
    let resolver = move |entries: &[ImageIndexEntry]| pick_platform(entries, &platform);
    Client::new(ClientConfig {
        protocol: ClientProtocol::HttpsExcept(plain),
        platform_resolver: Some(Box::new(resolver)),
        read_timeout: Some(opts.timeout),
        connect_timeout: Some(opts.timeout),
        user_agent: concat!("golint-k8s/", env!("CARGO_PKG_VERSION")),
        max_concurrent_download: 1,
        ..Default::default()
    })
}

/// The digest of the index entry for `os/arch[/variant]`.
fn pick_platform(entries: &[ImageIndexEntry], platform: &str) -> Option<String> {
    let mut want = platform.split('/');
    let (os, arch, variant) = (want.next()?, want.next()?, want.next());
    entries
        .iter()
        .find(|e| {
            e.platform.as_ref().is_some_and(|p| {
                p.os.to_string() == os
                    && p.architecture.to_string() == arch
                    && variant.is_none_or(|v| p.variant.as_deref() == Some(v))
            })
        })
        .map(|e| e.digest.clone())
}

/// A file name for a cache key: letters, digits, `.`, `-` kept, anything else as `_XX`.
fn file_name(key: &str) -> String {
    let mut s = String::with_capacity(key.len());
    for b in key.bytes() {
        if b.is_ascii_alphanumeric() || b == b'.' || b == b'-' {
            s.push(b as char);
        } else {
            s.push_str(&format!("_{b:02x}"));
        }
    }
    s
}

#[derive(serde::Serialize, serde::Deserialize)]
struct TagEntry {
    digest: String,
    /// Seconds since the Unix epoch when the registry said it.
    at: u64,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Option<T> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// Written to a temporary file and renamed, so a reader never sees half of it. Failing to cache
/// is not an error.
fn write_json<T: serde::Serialize>(path: &Path, value: &T) {
    let Some(dir) = path.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    if let (Ok(bytes), Ok(mut tmp)) = (
        serde_json::to_vec_pretty(value),
        tempfile::NamedTempFile::new_in(dir),
    ) {
        if std::io::Write::write_all(&mut tmp, &bytes).is_ok() {
            let _ = tmp.persist(path);
        }
    }
}

/// Where a tag's digest is cached.
fn tag_file(reference: &Reference, opts: &Options) -> Option<PathBuf> {
    let dir = opts.cache_dir.as_ref()?.join("images").join("tags");
    Some(dir.join(file_name(&reference.whole())))
}

/// Where an image's facts are cached: by digest and platform.
fn facts_file(digest: &str, opts: &Options) -> Option<PathBuf> {
    let dir = opts.cache_dir.as_ref()?.join("images").join("facts");
    Some(dir.join(file_name(&format!("{digest}@{}", opts.platform)) + ".json"))
}

/// What the cache holds for a reference.
enum Cached {
    Facts(ImageFacts),
    /// The digest (written in the reference, or a tag's recent look-up), but not its facts.
    Digest(String),
    /// Nothing: the tag's digest must be asked for.
    Nothing,
}

/// The cache alone, without the network: a tag's digest counts while younger than [`TAG_TTL`]
/// (offline, at any age).
fn cached(reference: &Reference, opts: &Options) -> Cached {
    let digest = match reference.digest() {
        Some(d) => d.to_string(),
        None => {
            let entry = tag_file(reference, opts)
                .as_deref()
                .and_then(read_json::<TagEntry>)
                .filter(|t| opts.offline || now().saturating_sub(t.at) < TAG_TTL.as_secs());
            match entry {
                Some(t) => t.digest,
                None => return Cached::Nothing,
            }
        }
    };
    match facts_file(&digest, opts)
        .as_deref()
        .and_then(read_json::<ImageFacts>)
    {
        Some(f) => Cached::Facts(f),
        None => Cached::Digest(digest),
    }
}

async fn inspect(
    client: &Client,
    reference: &Reference,
    digest: Option<String>,
    creds: &Credentials,
    opts: &Options,
) -> Result<ImageFacts, String> {
    let registry = reference.resolve_registry().to_string();
    let on = |e: OciDistributionError| registry_error(&e, &registry, creds);
    let auth = &creds.auth;
    let digest = match digest {
        Some(d) => d,
        None => {
            let d = client
                .fetch_manifest_digest(reference, auth)
                .await
                .map_err(on)?;
            if let Some(f) = tag_file(reference, opts) {
                write_json(
                    &f,
                    &TagEntry {
                        digest: d.clone(),
                        at: now(),
                    },
                );
            }
            d
        }
    };
    let facts_file = facts_file(&digest, opts);
    // A tag looked up again after its time may still name the digest whose facts are cached.
    if let Some(f) = facts_file.as_deref().and_then(read_json::<ImageFacts>) {
        return Ok(f);
    }
    let pinned = reference.clone_with_digest(digest);
    let (manifest, manifest_digest) = client
        .pull_image_manifest(&pinned, auth)
        .await
        .map_err(on)?;
    if manifest.config.size > 4 << 20 {
        return Err(format!(
            "the image config is {} bytes",
            manifest.config.size
        ));
    }
    let mut config = Vec::new();
    client
        .pull_blob(&pinned, &manifest.config, &mut config)
        .await
        .map_err(|e| format!("the image config: {}", on(e)))?;
    let config: serde_json::Value =
        serde_json::from_slice(&config).map_err(|e| format!("the image config: {e}"))?;
    let c = &config["config"];
    let strings = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let entrypoint = strings(&c["Entrypoint"]);
    let cmd = strings(&c["Cmd"]);
    let env: Vec<(String, String)> = strings(&c["Env"])
        .into_iter()
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => (kv, String::new()),
        })
        .collect();
    let working_dir = c["WorkingDir"].as_str().unwrap_or("/").to_string();
    let from_cmd = entrypoint.is_empty();
    let argv: Vec<String> = entrypoint.into_iter().chain(cmd).collect();
    let image_size = manifest
        .layers
        .iter()
        .fold(0u64, |n, l| n.saturating_add(l.size.max(0) as u64));
    let mut facts = ImageFacts {
        digest: manifest_digest,
        kind: Runtime::Unknown(String::new()),
        env,
        entrypoint: argv,
        from_cmd,
        bytes_read: 0,
        image_size,
    };
    let mut layers = Layers {
        client,
        registry: &registry,
        creds,
        image: &pinned,
        layers: &manifest.layers,
        cap: opts.layer_cap,
        timeout: opts.timeout,
        bytes_read: 0,
    };
    let kind = classify(&mut layers, &facts, &working_dir).await?;
    facts.kind = kind;
    facts.bytes_read = layers.bytes_read;
    if let Some(f) = &facts_file {
        write_json(f, &facts);
    }
    Ok(facts)
}

/// What the argv runs: an interpreter by its name, else the file it names, found in the layers.
async fn classify(
    layers: &mut Layers<'_>,
    facts: &ImageFacts,
    working_dir: &str,
) -> Result<Runtime, String> {
    let words: Vec<&str> = facts.entrypoint.iter().map(String::as_str).collect();
    if words.is_empty() {
        return Ok(Runtime::Unknown(
            "the image sets no Entrypoint or Cmd".into(),
        ));
    }
    let program = match crate::runtime::signs::sign_of_words(&words, 0) {
        Some(crate::runtime::signs::CommandSign::Program { word, language })
            if language != "go" =>
        {
            return Ok(Runtime::Interpreter {
                language: language.to_string(),
                why: format!("its entrypoint runs {word}"),
            })
        }
        Some(crate::runtime::signs::CommandSign::Script(word)) => {
            return Ok(Runtime::Interpreter {
                language: "shell".into(),
                why: format!("its entrypoint runs the shell script {word}"),
            })
        }
        Some(crate::runtime::signs::CommandSign::Program { word, .. }) => word,
        None => *words
            .get(crate::runtime::signs::program_start(&words))
            .ok_or("the entrypoint names no program")?,
    };
    let candidates: Vec<String> = if program.contains('/') {
        let abs = if program.starts_with('/') {
            program.to_string()
        } else {
            format!("{working_dir}/{program}")
        };
        vec![layers::normalize(&abs)]
    } else {
        facts
            .env_var("PATH")
            .unwrap_or(DEFAULT_PATH)
            .split(':')
            .filter(|d| d.starts_with('/'))
            .map(|d| layers::normalize(&format!("{d}/{program}")))
            .collect()
    };
    let Some((path, bytes)) = layers.find(candidates).await? else {
        return Ok(Runtime::Unknown(format!(
            "the entrypoint {program} is not in the image"
        )));
    };
    let shown = format!("/{path}");
    if let Some(line) = bytes.strip_prefix(b"#!") {
        let line = line.split(|&b| b == b'\n').next().unwrap_or(&[]);
        let line = String::from_utf8_lossy(line);
        let words: Vec<&str> = line.split_whitespace().collect();
        let language = match crate::runtime::signs::sign_of_words(&words, 0) {
            Some(crate::runtime::signs::CommandSign::Program { language, .. }) => language,
            _ => "shell",
        };
        return Ok(Runtime::Interpreter {
            language: language.to_string(),
            why: format!("its entrypoint {shown} is a script for {}", line.trim()),
        });
    }
    Ok(match buildinfo::read(&bytes) {
        buildinfo::Binary::Go(b) => Runtime::Go(GoSummary::from_build_info(&shown, &b)),
        buildinfo::Binary::GoUnparsable { go_version, .. } => Runtime::Go(GoSummary {
            path: shown,
            go_version,
            deps: Vec::new(),
            default_godebug: String::new(),
        }),
        buildinfo::Binary::NotGo => Runtime::OtherElf { path: shown },
        buildinfo::Binary::NotElf => Runtime::Unknown(format!(
            "its entrypoint {shown} is neither an ELF executable nor a script"
        )),
    })
}

/// An image's layers, read from the registry top first.
struct Layers<'a> {
    client: &'a Client,
    registry: &'a str,
    creds: &'a Credentials,
    image: &'a Reference,
    layers: &'a [OciDescriptor],
    cap: u64,
    /// The timeout of each read, named when a download stops arriving.
    timeout: Duration,
    bytes_read: u64,
}

impl Layers<'_> {
    /// The first of `candidates` (in order) that the image has as a file, following links, with
    /// its bytes.
    async fn find(
        &mut self,
        mut candidates: Vec<String>,
    ) -> Result<Option<(String, Vec<u8>)>, String> {
        for _ in 0..=MAX_LINKS {
            let mut state: HashMap<String, Found> = HashMap::new();
            let mut answer = None;
            for layer in self.layers.iter().rev() {
                let open: Vec<String> = candidates
                    .iter()
                    .filter(|c| !state.contains_key(*c))
                    .cloned()
                    .collect();
                for (path, found) in self.scan(layer, &open).await? {
                    state.entry(path).or_insert(found);
                }
                // Decided once every candidate before the first file is known not to be there.
                answer = None;
                let mut open_before = false;
                for c in &candidates {
                    match state.get(c) {
                        None => {
                            open_before = true;
                            break;
                        }
                        Some(Found::File(_) | Found::Link(_)) => {
                            answer = Some(c.clone());
                            break;
                        }
                        Some(Found::Hidden | Found::NotFile) => {}
                    }
                }
                if !open_before {
                    break;
                }
            }
            // Past the bottom layer, a candidate not seen is simply absent.
            if answer.is_none() {
                answer = candidates
                    .iter()
                    .find(|c| matches!(state.get(*c), Some(Found::File(_) | Found::Link(_))))
                    .cloned();
            }
            let Some(path) = answer else { return Ok(None) };
            match state.remove(&path) {
                Some(Found::File(bytes)) => return Ok(Some((path, bytes))),
                Some(Found::Link(target)) => {
                    let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
                    let next = if target.starts_with('/') {
                        target
                    } else {
                        format!("{dir}/{target}")
                    };
                    candidates = vec![layers::normalize(&next)];
                }
                _ => return Ok(None),
            }
        }
        Err("the entrypoint is behind too many symbolic links".into())
    }

    /// Stream one layer into [`layers::scan`], which runs on its own thread and stops the
    /// download when it has its answer.
    async fn scan(
        &mut self,
        layer: &OciDescriptor,
        wanted: &[String],
    ) -> Result<HashMap<String, Found>, String> {
        if wanted.is_empty() {
            return Ok(HashMap::new());
        }
        if layer.size.max(0) as u64 > self.cap {
            return Err(format!(
                "layer {} is {} bytes, above the cap of {}",
                layer.digest, layer.size, self.cap
            ));
        }
        let mut stream = self
            .client
            .pull_blob_stream(self.image, layer)
            .await
            .map_err(|e| {
                let e = registry_error(&e, self.registry, self.creds);
                format!("layer {}: {e}", layer.digest)
            })?;
        let (tx, rx) = std::sync::mpsc::channel::<std::io::Result<bytes_chunk::Chunk>>();
        let wanted = wanted.to_vec();
        let cap = self.cap;
        let scanner =
            std::thread::spawn(move || layers::scan(bytes_chunk::Reader::new(rx), &wanted, cap));
        let mut read = 0u64;
        // Why the download broke off, which the scanner only sees as a failed read.
        let mut broke = None;
        while let Some(chunk) = stream.next().await {
            let chunk = match chunk {
                Ok(c) => {
                    read += c.len() as u64;
                    Ok(c.to_vec())
                }
                Err(e) => {
                    let mut why = with_causes(&e);
                    if why.contains("timed out") {
                        why.push_str(&format!(
                            " (nothing arrived for {}s, the --registry-timeout)",
                            self.timeout.as_secs()
                        ));
                    }
                    broke = Some(why.clone());
                    Err(std::io::Error::other(why))
                }
            };
            let failed = chunk.is_err();
            let over = read > self.cap;
            let chunk = if over {
                Err(std::io::Error::other("the layer is larger than the cap"))
            } else {
                chunk
            };
            // The scanner hung up: it has its answer.
            if tx.send(chunk).is_err() || failed || over {
                break;
            }
        }
        drop(tx);
        self.bytes_read += read;
        let scanned = scanner
            .join()
            .map_err(|_| "the layer reader failed".to_string())?;
        match (scanned, broke) {
            (Ok(found), _) => Ok(found),
            // Every byte arrived, but not the bytes the digest names: the client checks the
            // digest at the end, which can come before the decoder notices the damage.
            (Err(_), Some(why))
                if i64::try_from(read) == Ok(layer.size) && why.contains("digest") =>
            {
                Err(format!(
                    "layer {}: corrupt layer: its content does not match its digest ({why})",
                    layer.digest
                ))
            }
            (Err(_), Some(why)) => Err(format!(
                "layer {}: the download from registry {} broke off after {read} of {} bytes: {why}",
                layer.digest, self.registry, layer.size
            )),
            (Err(e), None) => Err(format!("layer {}: {e}", layer.digest)),
        }
    }
}

/// A `Read` over chunks arriving on a channel: the end of the channel is the end of the data.
mod bytes_chunk {
    use std::io::Read;
    use std::sync::mpsc::Receiver;

    pub type Chunk = Vec<u8>;

    pub struct Reader {
        rx: Receiver<std::io::Result<Chunk>>,
        buf: Chunk,
        pos: usize,
    }

    impl Reader {
        pub fn new(rx: Receiver<std::io::Result<Chunk>>) -> Reader {
            Reader {
                rx,
                buf: Vec::new(),
                pos: 0,
            }
        }
    }

    impl Read for Reader {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            while self.pos == self.buf.len() {
                match self.rx.recv() {
                    Ok(Ok(chunk)) => {
                        self.buf = chunk;
                        self.pos = 0;
                    }
                    Ok(Err(e)) => return Err(e),
                    Err(_) => return Ok(0),
                }
            }
            let n = out.len().min(self.buf.len() - self.pos);
            out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
            self.pos += n;
            Ok(n)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinned_references_keep_registry_and_repository() {
        let d = format!("sha256:{}", "a".repeat(64));
        assert_eq!(
            pin("127.0.0.1:5000/shop/app:v1", &d).unwrap(),
            format!("127.0.0.1:5000/shop/app@{d}")
        );
        assert_eq!(
            pin("nginx", &d).unwrap(),
            format!("docker.io/library/nginx@{d}")
        );
        assert_eq!(
            pin(&format!("r.io/a:1@sha256:{}", "b".repeat(64)), &d).unwrap(),
            format!("r.io/a@{d}")
        );
        assert_eq!(pin("Not A Reference", &d), None);
    }

    #[test]
    fn docker_hub_credentials_are_asked_for_under_its_index_url() {
        use docker_credential::{CredentialRetrievalError as E, DockerCredential as C};
        use std::cell::RefCell;
        assert_eq!(config_keys("ghcr.io"), ["ghcr.io"]);
        let hub = config_keys("index.docker.io");
        assert_eq!(hub, ["https://index.docker.io/v1/", "index.docker.io"]);
        // As `docker login` keeps them: found under the URL.
        let asked = RefCell::new(Vec::new());
        let found = first_credential(&hub, |k| {
            asked.borrow_mut().push(k.to_string());
            match k {
                "https://index.docker.io/v1/" => Ok(C::UsernamePassword("u".into(), "p".into())),
                _ => Err(E::NoCredentialConfigured),
            }
        });
        assert!(matches!(found, Ok(C::UsernamePassword(..))));
        assert_eq!(asked.borrow().len(), 1);
        // A helper that knows only the host: its answer for the host counts.
        let helper_failure = || E::HelperFailure {
            helper: "desktop".into(),
            stdout: "credentials not found in native keychain".into(),
            stderr: String::new(),
        };
        let found = first_credential(&hub, |k| match k {
            "index.docker.io" => Ok(C::UsernamePassword("u".into(), "p".into())),
            _ => Err(helper_failure()),
        });
        assert!(matches!(found, Ok(C::UsernamePassword(..))));
        // Neither: the helper's failure, which says more than "nothing configured".
        let failed = first_credential(&hub, |k| match k {
            "index.docker.io" => Err(E::NoCredentialConfigured),
            _ => Err(helper_failure()),
        });
        assert!(matches!(failed, Err(E::HelperFailure { .. })), "{failed:?}");
        assert!(matches!(
            first_credential(&hub, |_| Err(E::NoCredentialConfigured)),
            Err(E::NoCredentialConfigured)
        ));
    }

    #[test]
    fn plain_http_only_for_loopback_and_named_hosts() {
        assert!(plain_http("127.0.0.1:5000", &[]));
        assert!(plain_http("localhost", &[]));
        assert!(plain_http("[::1]:5000", &[]));
        assert!(!plain_http("index.docker.io", &[]));
        assert!(plain_http("reg.lan:5000", &["reg.lan".into()]));
        assert!(!plain_http("127.0.0.2.example.com", &[]));
    }

    #[test]
    fn refusals_and_absences_are_said_plainly() {
        let creds = Credentials {
            auth: RegistryAuth::Anonymous,
            said: "no credentials for r:5000 in the Docker config".into(),
        };
        let said = |e: OciDistributionError| registry_error(&e, "r:5000", &creds);
        assert_eq!(
            said(OciDistributionError::UnauthorizedError {
                url: "https://r:5000/v2/app/manifests/v1".into()
            }),
            "registry r:5000 refused access (HTTP 401 Unauthorized for /v2/app/manifests/v1): \
             no credentials for r:5000 in the Docker config"
        );
        assert_eq!(
            said(OciDistributionError::ServerError {
                code: 403,
                url: "https://r:5000/v2/app/blobs/sha256:00".into(),
                message: "<html>\n  forbidden\n</html>".into(),
            }),
            "registry r:5000 refused access (HTTP 403 for /v2/app/blobs/sha256:00: <html> \
             forbidden </html>): no credentials for r:5000 in the Docker config"
        );
        assert_eq!(
            said(OciDistributionError::ServerError {
                code: 404,
                url: "http://r:5000/v2/app/manifests/v2".into(),
                message: String::new(),
            }),
            "registry r:5000: not found (HTTP 404): /v2/app/manifests/v2"
        );
        let refusal = said(OciDistributionError::AuthenticationFailure(
            r#"{"details":"incorrect username or password"}"#.into(),
        ));
        assert_eq!(
            refusal,
            "registry r:5000 refused access (its token service said: incorrect username or \
             password): no credentials for r:5000 in the Docker config"
        );
        assert!(is_refusal(&refusal));
        assert!(!is_refusal(
            "registry r:5000: not found (HTTP 404): /v2/app/manifests/v2"
        ));
        assert_eq!(token_service_message("<p>no</p>\n"), "<p>no</p>");
        assert!(one_line(&"x".repeat(1000)).ends_with('…'));
    }
}
