//! Reading images from their registries (`lint --inspect-images`): the manifest (an index gives
//! the platform's), the config (Entrypoint, Cmd, Env, WorkingDir), then the layers, top first and
//! only until the entrypoint's file is found, and that file's Go build info.
//!
//! What an image says is taken only from bytes its digests vouch for: the manifest, the config
//! and every layer read are hashed and compared with the digest that names them, a layer to its
//! last byte even when the entrypoint was found early in it. A registry is any server a manifest
//! names, so nothing it sends is trusted further: every body is capped by the bytes that arrive,
//! every wait for one image falls under one deadline, and only the public registries (and those
//! the config lists) are contacted, at public addresses (checked as names resolve), so an image
//! named in a manifest under review cannot make the run probe its own network.
//!
//! Facts are cached as JSON by registry, repository and digest under the cache directory, so a
//! second run asks the registry for no blob; a tag's digest is kept for [`TAG_TTL`].
//!
//! Credentials come from the Docker config, as `docker` and `crane` read them: an `auths` entry
//! of `$DOCKER_CONFIG/config.json` (else `~/.docker/config.json`), or the credential helper that
//! `credHelpers` or `credsStore` names. They are sent as HTTP Basic credentials when the
//! registry's `/v2/` asks for Basic authentication, or exchanged for a bearer token when it names
//! a token service; without any, images are read anonymously.

use super::layers::{self, Found};
use super::{buildinfo, GoSummary, ImageFacts, Runtime};
use futures_util::StreamExt;
use oci_client::errors::{OciDistributionError, OciErrorCode};
use oci_client::manifest::{ImageIndexEntry, OciDescriptor, OciManifest};
use oci_client::secrets::RegistryAuth;
use oci_client::Reference;
use sha2::{Digest as _, Sha256};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The registries read without being listed in the config's `image-registries`, on the HTTPS
/// port: Docker Hub, GitHub's, Quay, Kubernetes', Google's, Amazon's public one, Microsoft's,
/// NVIDIA's, GitLab's, Chainguard's, Elastic's and Red Hat's.
pub const PUBLIC_REGISTRIES: &[&str] = &[
    "docker.io",
    "index.docker.io",
    "registry-1.docker.io",
    "ghcr.io",
    "quay.io",
    "registry.k8s.io",
    "k8s.gcr.io",
    "gcr.io",
    "*.gcr.io",
    "*.pkg.dev",
    "public.ecr.aws",
    "mcr.microsoft.com",
    "nvcr.io",
    "registry.gitlab.com",
    "cgr.dev",
    "docker.elastic.co",
    "registry.access.redhat.com",
    "registry.redhat.io",
];

/// The most bytes read of a manifest or an index (the CNCF distribution registry refuses to
/// store larger ones).
const MANIFEST_CAP: u64 = 4 << 20;
/// The most bytes read of an image config.
const CONFIG_CAP: u64 = 4 << 20;
/// The most bytes read of a token service's answer.
const TOKEN_CAP: u64 = 1 << 20;
/// The most bytes kept of an error's body.
const ERROR_CAP: u64 = 64 << 10;
/// The most bytes kept of the entrypoint's file: a larger one is not read for its build info.
pub const ENTRYPOINT_CAP: u64 = 256 << 20;
/// An image as a whole, token requests included, gets this many `--registry-timeout`s.
const IMAGE_TIMEOUTS: u32 = 8;

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
    /// Registries (host, host:port or `*.domain`) read besides [`PUBLIC_REGISTRIES`], at any
    /// address: the config's `image-registries`.
    pub registries: Vec<String>,
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
            registries: Vec::new(),
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
        .filter_map(|r| Some((r.clone(), registry_image(r)?)))
        .collect();
    // What the cache answers needs no runtime, client or credentials: a warm run, and the
    // language server (always offline), start none of them.
    // Two small files per image: read on every thread, as thousands of them are on a warm run.
    let looked: Vec<(String, Reference, Cached)> = {
        use rayon::prelude::*;
        parsed
            .into_par_iter()
            .map(|(text, reference)| {
                let c = cached(&reference, opts);
                (text, reference, c)
            })
            .collect()
    };
    let mut answers = HashMap::new();
    let mut asked = Vec::new();
    for (text, reference, found) in looked {
        match found {
            Cached::Facts(f) => {
                answers.insert(text, Ok(f));
            }
            found if opts.offline => {
                answers.insert(text, offline_answer(found));
            }
            // Not contacted at all: a manifest under review must not make the run probe the
            // network it runs in.
            _ if !allowed(reference.resolve_registry(), &listed_hosts(opts)) => {
                answers.insert(text, Err(not_allowed(reference.resolve_registry())));
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
    // Without a trust store (a `scratch` image without CA certificates) no client can be made:
    // each image says so, the lint goes on.
    let client = match client(opts) {
        Ok(c) => c,
        Err(why) => {
            answers.extend(asked.into_iter().map(|(r, _, _)| (r, Err(why.clone()))));
            return answers;
        }
    };
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
                    // Every request has its timeout; this bounds the image as a whole, token
                    // requests included, however slowly its bytes arrive.
                    let deadline = opts.timeout.saturating_mul(IMAGE_TIMEOUTS);
                    let facts = match tokio::time::timeout(
                        deadline,
                        inspect(client, &reference, digest, creds, opts),
                    )
                    .await
                    {
                        Ok(r) => r,
                        Err(_) => Err(format!(
                            "gave up after {}s ({IMAGE_TIMEOUTS} times the --registry-timeout)",
                            deadline.as_secs()
                        )),
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

/// `text` as a registry image: references that are not one (`ko://…`, templates) are None.
fn registry_image(text: &str) -> Option<Reference> {
    if text.contains("://") || text.contains("{{") || text.contains('$') {
        return None;
    }
    parse_reference(text)
}

fn offline_answer(found: Cached) -> Result<ImageFacts, String> {
    match found {
        Cached::Facts(f) => Ok(f),
        Cached::Digest(d) => Err(format!(
            "--offline, and the facts of {d} are not in the cache"
        )),
        Cached::Nothing => Err("--offline, and the image's digest is not in the cache".to_string()),
    }
}

/// A reference as `Reference::try_from` reads it. The usual shapes (`host[:port]/path:tag`,
/// `path@sha256:…`) are read here: `try_from` compiles a large regular expression first, which
/// cost a run with a warm cache more than all its cache lookups together. Anything else is left
/// to it.
fn parse_reference(s: &str) -> Option<Reference> {
    usual_reference(s).or_else(|| Reference::try_from(s).ok())
}

/// [`parse_reference`] for the usual shapes; `None` for anything else, valid or not.
fn usual_reference(s: &str) -> Option<Reference> {
    let (rest, digest) = match s.split_once('@') {
        Some((rest, d)) => {
            let hex = d.strip_prefix("sha256:")?;
            if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            (rest, Some(d))
        }
        None => (s, None),
    };
    let last = rest.rfind('/').map_or(0, |i| i + 1);
    let (name, tag) = match rest[last..].find(':') {
        Some(i) => (&rest[..last + i], Some(&rest[last + i + 1..])),
        None => (rest, None),
    };
    if let Some(t) = tag {
        let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        let b = t.as_bytes();
        if b.is_empty()
            || b.len() > 128
            || !word(b[0])
            || !b.iter().all(|&c| word(c) || c == b'.' || c == b'-')
        {
            return None;
        }
    }
    let (first, path) = match name.split_once('/') {
        Some((first, path)) => (first, Some(path)),
        None => (name, None),
    };
    if !path.is_none_or(|p| p.split('/').all(path_component))
        || !(path_component(first) || (path.is_some() && domain(first)))
    {
        return None;
    }
    // Where the registry ends, as the distribution reference grammar splits it.
    let (mut registry, mut repository) = match path {
        Some(p) if first.contains(['.', ':']) || first == "localhost" => {
            (first.to_string(), p.to_string())
        }
        _ => ("docker.io".to_string(), name.to_string()),
    };
    if registry == "index.docker.io" {
        registry = "docker.io".to_string();
    }
    if registry == "docker.io" && !repository.contains('/') {
        repository = format!("library/{repository}");
    }
    if repository.len() > 255 {
        return None;
    }
    let digest = digest.map(str::to_string);
    Some(match (tag.map(str::to_string), digest) {
        (Some(t), Some(d)) => Reference::with_tag_and_digest(registry, repository, t, d),
        (None, Some(d)) => Reference::with_digest(registry, repository, d),
        (t, None) => {
            Reference::with_tag(registry, repository, t.unwrap_or_else(|| "latest".into()))
        }
    })
}

/// A path component of a repository name: lowercase letters and digits, joined by one `.`,
/// one or two `_`, or any number of `-`.
fn path_component(c: &str) -> bool {
    let b = c.as_bytes();
    let alnum = |x: &u8| x.is_ascii_lowercase() || x.is_ascii_digit();
    if !b.first().is_some_and(alnum) || !b.last().is_some_and(alnum) {
        return false;
    }
    b.split(alnum)
        .all(|sep| matches!(sep, b"" | b"." | b"_" | b"__") || sep.iter().all(|&x| x == b'-'))
}

/// A registry host: labels of letters, digits and inner hyphens joined by dots, and a port.
fn domain(c: &str) -> bool {
    let host = match c.rsplit_once(':') {
        Some((host, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => host,
        Some(_) => return false,
        None => c,
    };
    host.split('.').all(|label| {
        let b = label.as_bytes();
        b.first().is_some_and(u8::is_ascii_alphanumeric)
            && b.last().is_some_and(u8::is_ascii_alphanumeric)
            && b.iter().all(|&x| x.is_ascii_alphanumeric() || x == b'-')
    })
}

/// Whether `registry` (host or host:port) may be read: a public registry on the HTTPS port, or
/// one the config's `image-registries` lists.
pub fn allowed(registry: &str, configured: &[String]) -> bool {
    let (host, port) = split_host(registry);
    let public =
        port.is_none_or(|p| p == "443") && PUBLIC_REGISTRIES.iter().any(|p| host_matches(p, &host));
    public || listed(registry, configured)
}

/// Whether the config lists `registry` (host or host:port): an entry names it with or without
/// its port, or is `*.` and a domain that it lies below.
fn listed(registry: &str, configured: &[String]) -> bool {
    let (host, _) = split_host(registry);
    configured.iter().any(|c| {
        let c = c.trim().to_ascii_lowercase();
        c == registry.to_ascii_lowercase() || host_matches(&c, &host)
    })
}

/// Whether a host (lower case, without port) is `pattern` or, for `*.domain`, lies below it.
fn host_matches(pattern: &str, host: &str) -> bool {
    match pattern.strip_prefix("*.") {
        Some(domain) => host
            .strip_suffix(domain)
            .is_some_and(|rest| rest.ends_with('.') && rest.len() > 1),
        None => pattern == host,
    }
}

/// A registry's host (lower case, an IPv6 address without brackets) and port.
fn split_host(registry: &str) -> (String, Option<&str>) {
    let (host, port) = match registry.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((h, p)) => (h, p.strip_prefix(':')),
            None => (rest, None),
        },
        None => match registry.rsplit_once(':') {
            Some((h, p)) if !h.contains(':') => (h, Some(p)),
            _ => (registry, None),
        },
    };
    (host.to_ascii_lowercase(), port)
}

/// The note of a registry that is not read.
fn not_allowed(registry: &str) -> String {
    format!(
        "registry {registry} is not read: only the public registries are, and those the \
         config lists (add it to `image-registries: [\"{registry}\"]` in .golint-k8s.yaml)"
    )
}

/// Whether an address is reachable from the internet: not loopback, private, link-local,
/// shared (carrier-grade NAT), unspecified, multicast or reserved.
fn public_address(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(a) => {
            let o = a.octets();
            !(a.is_loopback()
                || a.is_private()
                || a.is_link_local()
                || a.is_unspecified()
                || a.is_broadcast()
                || a.is_multicast()
                || a.is_documentation()
                || o[0] == 0
                || o[0] >= 240
                || (o[0] == 100 && (64..128).contains(&o[1]))
                || (o[0] == 198 && (18..20).contains(&o[1]))
                || (o[0] == 192 && o[1] == 0 && o[2] == 0))
        }
        IpAddr::V6(a) => {
            if let Some(v4) = a.to_ipv4_mapped() {
                return public_address(IpAddr::V4(v4));
            }
            let s = a.segments();
            !(a.is_loopback()
                || a.is_unspecified()
                || a.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00
                || (s[0] & 0xffc0) == 0xfe80
                || (s[0] == 0x2001 && s[1] == 0x0db8)
                || (s[0] == 0x64 && s[1] == 0xff9b))
        }
    }
}

/// The registries read besides the public ones: the config's, and those named with
/// `--insecure-registry` (named by whoever runs the lint, not by the files it reads).
fn listed_hosts(opts: &Options) -> Vec<String> {
    opts.registries
        .iter()
        .chain(&opts.insecure)
        .cloned()
        .collect()
}

/// Hosts whose addresses are not checked: the registries the config lists (which may be on
/// the local network), and the HTTP proxy the environment names, which requests go through.
fn trusted_hosts(opts: &Options) -> Vec<String> {
    // Addresses are checked by host (a resolver sees no port): a registry listed as `host:port`
    // trusts its host's addresses, while [`allowed`] has already held it to that port.
    let mut hosts: Vec<String> = listed_hosts(opts)
        .iter()
        .map(|h| split_host(h.trim()).0)
        .collect();
    for var in [
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
    ] {
        let Ok(v) = std::env::var(var) else { continue };
        if let Some(host) = reqwest::Url::parse(&v)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
        {
            hosts.push(host.trim_start_matches('[').trim_end_matches(']').into());
        }
    }
    hosts
}

/// Why a URL's host may not be connected to: an address written in it that is not public and
/// not listed. Names are checked when they are resolved ([`Guard`]).
fn refused_address(url: &reqwest::Url, trusted: &[String]) -> Option<String> {
    let host = url.host_str()?;
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let ip: IpAddr = bare.parse().ok()?;
    if public_address(ip) || listed(bare, trusted) {
        return None;
    }
    Some(format!(
        "{host} is not a public address, and the config's image-registries does not list it"
    ))
}

/// The client's name resolution: a name that is not listed must resolve to public addresses
/// (those of the local network, loopback and link-local, such as a cloud's metadata service,
/// are dropped), so neither a registry nor a redirect can point the run into its own network.
struct Guard {
    trusted: Vec<String>,
}

impl reqwest::dns::Resolve for Guard {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_string();
        let trusted = listed(&host, &self.trusted);
        Box::pin(async move {
            let h = host.clone();
            let addrs = tokio::task::spawn_blocking(move || {
                std::net::ToSocketAddrs::to_socket_addrs(&(h.as_str(), 0))
                    .map(|a| a.collect::<Vec<SocketAddr>>())
            })
            .await??;
            let kept: Vec<SocketAddr> = addrs
                .iter()
                .copied()
                .filter(|a| trusted || public_address(a.ip()))
                .collect();
            if kept.is_empty() && !addrs.is_empty() {
                let why = format!(
                    "{host} resolves only to addresses that are not public ({}), and the \
                     config's image-registries does not list it",
                    addrs[0].ip()
                );
                return Err(why.into());
            }
            Ok(Box::new(kept.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// The HTTP client of a run. Fails without a trust store.
fn client(opts: &Options) -> Result<reqwest::Client, String> {
    let trusted = trusted_hosts(opts);
    let redirects = trusted.clone();
    let policy = reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() >= 10 {
            return attempt.error("too many redirects");
        }
        match refused_address(attempt.url(), &redirects) {
            Some(why) => attempt.error(why),
            None => attempt.follow(),
        }
    });
    reqwest::Client::builder()
        .user_agent(concat!("golint-k8s/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(opts.timeout)
        .read_timeout(opts.timeout)
        .redirect(policy)
        .dns_resolver(std::sync::Arc::new(Guard { trusted }))
        .build()
        .map_err(|e| {
            format!(
                "no HTTPS client could be made: {} (are the system's CA certificates \
                 installed? SSL_CERT_FILE or SSL_CERT_DIR can name them)",
                one_line(&with_causes(&e))
            )
        })
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

/// The media types of manifests and indexes asked for.
const MANIFEST_TYPES: &str = "application/vnd.oci.image.index.v1+json, \
     application/vnd.docker.distribution.manifest.list.v2+json, \
     application/vnd.oci.image.manifest.v1+json, \
     application/vnd.docker.distribution.manifest.v2+json";

/// `sha256:` and 64 hex digits, as OCI writes the digests of content: checked before a digest
/// is put into a URL or a file name.
fn check_digest(digest: &str) -> Result<(), String> {
    let hex = digest.strip_prefix("sha256:").unwrap_or("");
    if hex.len() == 64
        && hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        Ok(())
    } else {
        Err(format!(
            "the digest {} is not a sha256 digest",
            one_line(&digest.chars().take(80).collect::<String>())
        ))
    }
}

fn sha256_hex(bytes: impl Into<Vec<u8>>) -> String {
    let mut h = Sha256::new();
    h.update(bytes.into());
    finish(h)
}

fn finish(h: Sha256) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(71);
    s.push_str("sha256:");
    for b in h.finalize().iter() {
        s.push(HEX[usize::from(b >> 4)] as char);
        s.push(HEX[usize::from(b & 15)] as char);
    }
    s
}

/// `bytes` are the content `digest` names, or why not.
fn verify(what: &str, bytes: &[u8], digest: &str) -> Result<(), String> {
    let got = sha256_hex(bytes.to_vec());
    if got == digest {
        Ok(())
    } else {
        Err(format!(
            "{what} {digest} does not match its digest (its content is {got}): not used"
        ))
    }
}

/// One image's conversation with its registry: the base URL, and the authorization its
/// `/v2/` asked for (a token from its token service, or Basic credentials).
struct Session<'a> {
    http: &'a reqwest::Client,
    base: String,
    registry: String,
    repository: String,
    creds: &'a Credentials,
    authorization: Option<String>,
    /// Why the token service refused: said instead of the registry's bare 401 that follows.
    token_failure: Option<OciDistributionError>,
}

impl Session<'_> {
    /// Ask `/v2/` how to authenticate, and do it. A failure here is not the image's end: the
    /// requests that follow are made anonymously and say what the registry thinks of that.
    async fn login(&mut self) {
        let url = format!("{}/v2/", self.base);
        let Ok(res) = self.http.get(&url).send().await else {
            return;
        };
        let challenge = res
            .headers()
            .get(reqwest::header::WWW_AUTHENTICATE)
            .and_then(|h| h.to_str().ok())
            .map(str::to_string);
        drop(res);
        let Some(challenge) = challenge else { return };
        let (scheme, params) = parse_challenge(&challenge);
        let basic = match &self.creds.auth {
            RegistryAuth::Basic(u, p) => Some((u.clone(), p.clone())),
            _ => None,
        };
        if scheme.eq_ignore_ascii_case("bearer") {
            if let Some(realm) = params.get("realm") {
                self.token(realm, params.get("service"), basic).await;
                return;
            }
        }
        if let Some((u, p)) = basic {
            self.authorization = Some(basic_header(&u, &p));
        }
    }

    /// A pull token for the repository from the token service at `realm`.
    async fn token(
        &mut self,
        realm: &str,
        service: Option<&String>,
        basic: Option<(String, String)>,
    ) {
        let Ok(mut url) = reqwest::Url::parse(realm) else {
            return;
        };
        if !matches!(url.scheme(), "https" | "http") {
            return;
        }
        url.query_pairs_mut()
            .append_pair("scope", &format!("repository:{}:pull", self.repository));
        if let Some(s) = service {
            url.query_pairs_mut().append_pair("service", s);
        }
        let mut req = self.http.get(url);
        if let Some((u, p)) = &basic {
            req = req.basic_auth(u, Some(p));
        }
        let Ok(res) = req.send().await else { return };
        let ok = res.status().is_success();
        let Ok(body) = capped(res, if ok { TOKEN_CAP } else { ERROR_CAP }, !ok).await else {
            return;
        };
        if !ok {
            let reason = String::from_utf8_lossy(&body).into_owned();
            self.token_failure = Some(OciDistributionError::AuthenticationFailure(reason));
            return;
        }
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        if let Some(t) = ["token", "access_token"]
            .iter()
            .find_map(|k| v[k].as_str().filter(|t| !t.is_empty()))
        {
            self.authorization = Some(format!("Bearer {t}"));
        }
    }

    /// A request to the registry, its answer when it is a success, else what the answer
    /// means (see [`registry_error`]).
    async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        accept: Option<&str>,
    ) -> Result<reqwest::Response, String> {
        let url = format!("{}{path}", self.base);
        let mut req = self.http.request(method, &url);
        if let Some(a) = accept {
            req = req.header(reqwest::header::ACCEPT, a);
        }
        if let Some(a) = &self.authorization {
            req = req.header(reqwest::header::AUTHORIZATION, a);
        }
        let res = req
            .send()
            .await
            .map_err(|e| format!("registry {}: {}", self.registry, with_causes(&e)))?;
        let status = res.status();
        if status.is_success() && status != reqwest::StatusCode::PARTIAL_CONTENT {
            return Ok(res);
        }
        let body = capped(res, ERROR_CAP, true).await.unwrap_or_default();
        let e = match status.as_u16() {
            401 => OciDistributionError::UnauthorizedError { url: url.clone() },
            code @ 400..=499 => {
                match serde_json::from_slice::<oci_client::errors::OciEnvelope>(&body) {
                    Ok(envelope) => OciDistributionError::RegistryError {
                        envelope,
                        url: url.clone(),
                    },
                    Err(_) => OciDistributionError::ServerError {
                        code,
                        url: url.clone(),
                        message: String::from_utf8_lossy(&body).into_owned(),
                    },
                }
            }
            code => OciDistributionError::ServerError {
                code,
                url: url.clone(),
                message: String::from_utf8_lossy(&body).into_owned(),
            },
        };
        let text = registry_error(&e, &self.registry, self.creds);
        Err(match &self.token_failure {
            Some(t) if is_refusal(&text) => registry_error(t, &self.registry, self.creds),
            _ => text,
        })
    }

    /// The digest a tag names now: the registry's `Docker-Content-Digest`, else the digest of
    /// the manifest it serves. Either is checked when the manifest is read by it.
    async fn resolve(&self, tag: &str) -> Result<String, String> {
        let path = format!("/v2/{}/manifests/{tag}", self.repository);
        // An answer to HEAD has no body: a refusal or an absence is asked again with GET, whose
        // body says why (`DENIED`, `MANIFEST_UNKNOWN`).
        let header = self
            .send(reqwest::Method::HEAD, &path, Some(MANIFEST_TYPES))
            .await
            .ok()
            .and_then(|res| {
                res.headers()
                    .get("docker-content-digest")
                    .and_then(|h| h.to_str().ok())
                    .map(str::to_string)
            });
        if let Some(d) = header {
            check_digest(&d)?;
            return Ok(d);
        }
        let res = self
            .send(reqwest::Method::GET, &path, Some(MANIFEST_TYPES))
            .await?;
        let body = self.body(res, MANIFEST_CAP, "the manifest").await?;
        Ok(sha256_hex(body))
    }

    /// The manifest `digest` names, checked against it.
    async fn manifest(&self, digest: &str) -> Result<OciManifest, String> {
        check_digest(digest)?;
        let path = format!("/v2/{}/manifests/{digest}", self.repository);
        let res = self
            .send(reqwest::Method::GET, &path, Some(MANIFEST_TYPES))
            .await?;
        let body = self.body(res, MANIFEST_CAP, "the manifest").await?;
        verify("the manifest", &body, digest)?;
        serde_json::from_slice(&body).map_err(|e| format!("the manifest {digest}: {e}"))
    }

    /// A blob's answer, its body not yet read.
    async fn blob(&self, digest: &str) -> Result<reqwest::Response, String> {
        check_digest(digest)?;
        let path = format!("/v2/{}/blobs/{digest}", self.repository);
        self.send(reqwest::Method::GET, &path, None).await
    }

    /// A body of at most `cap` bytes, by the bytes that arrive: what the headers declare is the
    /// sender's to choose.
    async fn body(&self, res: reqwest::Response, cap: u64, what: &str) -> Result<Vec<u8>, String> {
        capped(res, cap, false).await.map_err(|e| match e {
            Capped::Over => format!("{what} is larger than {cap} bytes: not read"),
            Capped::Broke(why) => format!(
                "{what}: the download from registry {} broke off: {why}",
                self.registry
            ),
        })
    }
}

/// Why a body was not read whole.
enum Capped {
    Over,
    Broke(String),
}

/// At most `cap` bytes of a body; more is an error, or (`truncate`, for error bodies) cut off.
async fn capped(res: reqwest::Response, cap: u64, truncate: bool) -> Result<Vec<u8>, Capped> {
    if !truncate && res.content_length().is_some_and(|n| n > cap) {
        return Err(Capped::Over);
    }
    let mut out = Vec::new();
    let mut stream = res.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| Capped::Broke(with_causes(&e)))?;
        let room = (cap as usize).saturating_sub(out.len());
        if chunk.len() > room {
            if truncate {
                out.extend_from_slice(&chunk[..room]);
                return Ok(out);
            }
            return Err(Capped::Over);
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// `Basic realm="…"` or `Bearer realm="…",service="…",scope="…"`: the scheme and its
/// parameters (keys in lower case).
fn parse_challenge(header: &str) -> (String, HashMap<String, String>) {
    let header = header.trim();
    let (scheme, rest) = header.split_once(' ').unwrap_or((header, ""));
    let mut params = HashMap::new();
    let mut rest = rest.trim_start();
    while !rest.is_empty() {
        let Some((key, after)) = rest.split_once('=') else {
            break;
        };
        let key = key
            .trim()
            .trim_start_matches(',')
            .trim()
            .to_ascii_lowercase();
        let after = after.trim_start();
        let (value, next) = if let Some(quoted) = after.strip_prefix('"') {
            let mut value = String::new();
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, n)) = chars.next() {
                            value.push(n);
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => value.push(c),
                }
            }
            (value, &quoted[end..])
        } else {
            let end = after.find(',').unwrap_or(after.len());
            (after[..end].trim().to_string(), &after[end..])
        };
        params.insert(key, value);
        rest = next.trim_start().trim_start_matches(',').trim_start();
    }
    (scheme.to_string(), params)
}

fn basic_header(user: &str, password: &str) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let input = format!("{user}:{password}");
    let mut out = String::from("Basic ");
    for chunk in input.as_bytes().chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
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
            const HEX: &[u8; 16] = b"0123456789abcdef";
            s.push('_');
            s.push(HEX[usize::from(b >> 4)] as char);
            s.push(HEX[usize::from(b & 15)] as char);
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

/// The most bytes of a cache entry read: an entry past it is no entry (facts with thousands of
/// modules take a few hundred KiB).
const ENTRY_CAP: u64 = 4 << 20;

/// A cache entry, or None when it is missing, larger than [`ENTRY_CAP`] or not what it should be.
/// A warm run reads thousands: one open and reads into a buffer of the usual entry's size, with
/// no look at the file's length first.
fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Option<T> {
    serde_json::from_slice(&read_capped(path, ENTRY_CAP)?).ok()
}

/// The bytes of the file at `path`, None when it cannot be read or holds more than `cap`.
fn read_capped(path: &Path, cap: u64) -> Option<Vec<u8>> {
    use std::io::Read;
    let f = std::fs::File::open(path).ok()?;
    // Sized as the file is, so a snapshot of megabytes is not read into a buffer that doubles.
    let size = f.metadata().map_or(0, |m| m.len()).min(cap) as usize;
    let mut bytes = Vec::with_capacity(size + 1);
    f.take(cap + 1).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 <= cap).then_some(bytes)
}

/// Written to a temporary file and renamed, so a reader never sees half of it. Failing to cache
/// is not an error.
fn write_json<T: serde::Serialize>(path: &Path, value: &T) {
    if let Ok(bytes) = serde_json::to_vec_pretty(value) {
        write_bytes(path, &bytes);
    }
}

fn write_bytes(path: &Path, bytes: &[u8]) {
    let Some(dir) = path.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    if let Ok(mut tmp) = tempfile::NamedTempFile::new_in(dir) {
        if std::io::Write::write_all(&mut tmp, bytes).is_ok() {
            let _ = tmp.persist(path);
        }
    }
}

/// Where a tag's digest is cached.
fn tag_file(reference: &Reference, opts: &Options) -> Option<PathBuf> {
    let dir = opts.cache_dir.as_ref()?.join("images").join("tags");
    Some(dir.join(file_name(&reference.whole())))
}

/// Where an image's facts are cached: by registry, repository, digest and platform. The same
/// digest on another registry is another registry's claim, read again.
fn facts_file(reference: &Reference, digest: &str, opts: &Options) -> Option<PathBuf> {
    let dir = opts.cache_dir.as_ref()?.join("images").join("facts");
    // The repository's name can be long: a hash of it keeps the file name short.
    let place = sha256_hex(format!(
        "{}/{}",
        reference.resolve_registry(),
        reference.repository()
    ));
    let key = format!("{digest}@{}@{}", opts.platform, &place[7..23]);
    Some(dir.join(file_name(&key) + ".json"))
}

/// Record `facts` for `reference` in the cache as a read from its registry records them: the
/// tag's digest (unless the reference names one) and the facts under that digest. Benchmarks
/// warm a cache with it (`lint --warm-image-cache`), as no registry is at hand there.
#[doc(hidden)]
pub fn remember(reference: &str, facts: &ImageFacts, opts: &Options) {
    let Some(r) = parse_reference(reference) else {
        return;
    };
    let digest = r
        .digest()
        .map_or_else(|| facts.digest.clone(), str::to_string);
    if r.digest().is_none() {
        if let Some(f) = tag_file(&r, opts) {
            let entry = TagEntry {
                digest: digest.clone(),
                at: now(),
            };
            write_json(&f, &entry);
        }
    }
    if let Some(f) = facts_file(&r, &digest, opts) {
        write_json(&f, facts);
    }
}

/// Made-up facts for `reference` (a Go program, a digest made of the name), for
/// [`remember`] in a benchmark.
#[doc(hidden)]
pub fn made_up_facts(reference: &str) -> ImageFacts {
    ImageFacts {
        digest: sha256_hex(reference),
        kind: Runtime::Go(GoSummary {
            path: "/app".to_string(),
            go_version: "go1.24.0".to_string(),
            deps: Vec::new(),
            default_godebug: String::new(),
        }),
        env: Vec::new(),
        entrypoint: vec!["/app".to_string()],
        from_cmd: false,
        bytes_read: 0,
        image_size: 0,
    }
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
    match facts_file(reference, &digest, opts)
        .as_deref()
        .and_then(read_json::<ImageFacts>)
    {
        Some(f) => Cached::Facts(f),
        None => Cached::Digest(digest),
    }
}

/// The cache as a run that asks it for thousands of images offline reads it: from one snapshot
/// of the answers an earlier such run found (`images/snapshot.json`), instead of two files per
/// image, which cost a warm run more than its lint. An answer follows from the entries (a tag's
/// digest, the facts under it) and the platform alone, so the snapshot holds while the
/// directories of entries are as they were: it is used only while both still have the
/// modification times it recorded, so an entry the cache's writer adds or replaces (a file
/// renamed into its directory) makes it stale, and the entries are read from their files again.
/// An image the snapshot lacks, or whose facts in it do not decode, is read from its files. A
/// snapshot that is not what it should be (or larger than [`SNAPSHOT_CAP`]) is ignored, as a bad
/// entry is.
pub struct OfflineCache {
    opts: Options,
    /// The snapshot, when it matches the directories and the platform.
    snapshot: Option<SnapshotText>,
    /// The directories' modification times before any entry was read, when they are old enough
    /// that a later change cannot share them: a snapshot written then is valid until one changes.
    stamps: Option<Stamps>,
    /// The facts this run read from the entries' files, for the next snapshot.
    read: std::sync::Mutex<HashMap<String, ImageFacts>>,
}

/// The modification times (seconds, nanoseconds) of the tags and the facts directories.
type Stamps = [Option<(u64, u32)>; 2];

/// How many bytes of snapshot are read: past this, entries are read from their files.
const SNAPSHOT_CAP: u64 = 256 << 20;

/// A directory changed less than this long ago may change again within the same modification
/// time (on a file system with coarse times): no snapshot is written of it.
const SETTLED: Duration = Duration::from_secs(2);

/// The first line of a snapshot: what it was taken of. Each further line is one image's entry,
/// `["image",{facts}]`, sorted by the image's JSON text, so that an entry is found by a binary
/// search over the lines and only the entries asked for are decoded. Opening the snapshot is then
/// reading it and finding its line starts: decoding all of it (as one JSON object, which a
/// thousand images made take longer than the lint) was most of what a warm run spent beyond its
/// lint, on one thread before the lint could start.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SnapshotHead {
    stamps: Stamps,
    platform: String,
}

/// A snapshot's text and where each of its entries' lines starts.
struct SnapshotText {
    text: String,
    /// The start of each entry's line, then the end of the text.
    lines: Vec<usize>,
}

impl SnapshotText {
    /// The snapshot in `text`, when it was taken of `stamps` for `platform`.
    fn parse(text: String, stamps: Option<Stamps>, platform: &str) -> Option<SnapshotText> {
        let head_end = text.find('\n')?;
        let head: SnapshotHead = serde_json::from_str(&text[..head_end]).ok()?;
        if Some(head.stamps) != stamps || head.platform != platform {
            return None;
        }
        let mut lines: Vec<usize> = memchr::memchr_iter(b'\n', text.as_bytes())
            .map(|i| i + 1)
            .collect();
        if lines.last() != Some(&text.len()) {
            lines.push(text.len());
        }
        Some(SnapshotText { text, lines })
    }

    /// Entry `i`'s line: the image's JSON text (quoted) and its facts' JSON text.
    fn entry(&self, i: usize) -> Option<(&str, &str)> {
        let line = self.text[self.lines[i]..self.lines[i + 1]].trim_end_matches('\n');
        let line = line.strip_prefix('[')?.strip_suffix(']')?;
        let end = quoted_end(line)?;
        Some((&line[..end], line[end..].strip_prefix(',')?))
    }

    /// The facts the snapshot holds for `image`, None when it holds none or they do not decode.
    fn get(&self, image: &str) -> Option<ImageFacts> {
        let key = serde_json::to_string(image).ok()?;
        // Each step compares the key with the bytes after the line's `[`: two JSON strings
        // differ before either ends (a `"` that ends one is inside the other only escaped, and
        // then a byte before it differs), so the line need not be taken apart first.
        let after_bracket = |i: usize| {
            let line = &self.text.as_bytes()[self.lines[i]..self.lines[i + 1]];
            let line = line.get(1..).unwrap_or_default();
            &line[..line.len().min(key.len())]
        };
        let (mut low, mut high) = (0, self.lines.len() - 1);
        while low < high {
            let mid = low + (high - low) / 2;
            match after_bracket(mid).cmp(key.as_bytes()) {
                std::cmp::Ordering::Less => low = mid + 1,
                std::cmp::Ordering::Greater => high = mid,
                std::cmp::Ordering::Equal => {
                    // A damaged line is never read as another image's.
                    let (k, facts) = self.entry(mid)?;
                    if k != key {
                        return None;
                    }
                    return serde_json::from_str(facts).ok();
                }
            }
        }
        None
    }

    /// Every entry's line, by the image's JSON text.
    fn entries(&self) -> impl Iterator<Item = (&str, &str)> {
        (0..self.lines.len() - 1).filter_map(|i| self.entry(i))
    }
}

/// The length of the JSON string that `text` starts with, quotes included.
fn quoted_end(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    if bytes.first() != Some(&b'"') {
        return None;
    }
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

impl OfflineCache {
    /// The cache of `opts` (read offline), with its snapshot when that is still valid.
    pub fn open(opts: Options) -> OfflineCache {
        let opts = Options {
            offline: true,
            ..opts
        };
        let stamps = stamps(&opts);
        let settled = stamps.filter(|s| {
            let now = SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default();
            s.iter()
                .flatten()
                .all(|&(secs, nanos)| now.saturating_sub(Duration::new(secs, nanos)) > SETTLED)
        });
        let snapshot = snapshot_file(&opts)
            .and_then(|f| read_capped(&f, SNAPSHOT_CAP))
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .and_then(|text| SnapshotText::parse(text, stamps, &opts.platform));
        OfflineCache {
            opts,
            snapshot,
            stamps: settled,
            read: Default::default(),
        }
    }

    /// What the cache says of one image, as `inspect_all` answers it offline; None when `text`
    /// names no registry image.
    pub fn answer(&self, text: &str) -> Option<Result<ImageFacts, String>> {
        if let Some(f) = self.snapshot.as_ref().and_then(|s| s.get(text)) {
            return Some(Ok(f));
        }
        let found = cached(&registry_image(text)?, &self.opts);
        if let (Cached::Facts(f), Ok(mut read)) = (&found, self.read.lock()) {
            read.insert(text.to_string(), f.clone());
        }
        Some(offline_answer(found))
    }

    /// Write the snapshot for the next run, when this one read facts from their files and the
    /// directories have not changed since it began. Failing to is not an error.
    pub fn save(&self) {
        let (Some(settled), Some(file)) = (self.stamps, snapshot_file(&self.opts)) else {
            return;
        };
        let Ok(read) = self.read.lock() else {
            return;
        };
        if read.is_empty() || stamps(&self.opts) != Some(settled) {
            return;
        }
        // Each entry's line by its image's JSON text: the old snapshot's as they were, then
        // this run's over them.
        let mut entries: std::collections::BTreeMap<String, String> = self
            .snapshot
            .iter()
            .flat_map(SnapshotText::entries)
            .map(|(k, facts)| (k.to_string(), facts.to_string()))
            .collect();
        for (image, facts) in read.iter() {
            if let (Ok(k), Ok(f)) = (serde_json::to_string(image), serde_json::to_string(facts)) {
                entries.insert(k, f);
            }
        }
        let head = SnapshotHead {
            stamps: settled,
            platform: self.opts.platform.clone(),
        };
        let Ok(mut text) = serde_json::to_string(&head) else {
            return;
        };
        for (k, facts) in &entries {
            text.push_str("\n[");
            text.push_str(k);
            text.push(',');
            text.push_str(facts);
            text.push(']');
        }
        text.push('\n');
        if text.len() as u64 <= SNAPSHOT_CAP {
            write_bytes(&file, text.as_bytes());
        }
    }
}

/// The modification times of the directories of entries, None without a cache directory.
fn stamps(opts: &Options) -> Option<Stamps> {
    let images = opts.cache_dir.as_ref()?.join("images");
    Some([
        modified(&images.join("tags")),
        modified(&images.join("facts")),
    ])
}

fn snapshot_file(opts: &Options) -> Option<PathBuf> {
    Some(
        opts.cache_dir
            .as_ref()?
            .join("images")
            .join("snapshot.json"),
    )
}

/// A directory's modification time, None when it cannot be read.
fn modified(dir: &Path) -> Option<(u64, u32)> {
    let t = std::fs::metadata(dir).ok()?.modified().ok()?;
    let d = t.duration_since(SystemTime::UNIX_EPOCH).ok()?;
    Some((d.as_secs(), d.subsec_nanos()))
}

async fn inspect(
    http: &reqwest::Client,
    reference: &Reference,
    digest: Option<String>,
    creds: &Credentials,
    opts: &Options,
) -> Result<ImageFacts, String> {
    let registry = reference.resolve_registry().to_string();
    let scheme = if plain_http(&registry, &opts.insecure) {
        "http"
    } else {
        "https"
    };
    let base = format!("{scheme}://{registry}");
    if let Some(why) = reqwest::Url::parse(&base)
        .ok()
        .and_then(|u| refused_address(&u, &trusted_hosts(opts)))
    {
        return Err(format!("registry {registry}: {why}"));
    }
    let mut session = Session {
        http,
        base,
        registry: registry.clone(),
        repository: reference.repository().to_string(),
        creds,
        authorization: None,
        token_failure: None,
    };
    session.login().await;
    let digest = match digest {
        Some(d) => d,
        None => {
            let tag = reference.tag().unwrap_or("latest");
            let d = session.resolve(tag).await?;
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
    let facts_file = facts_file(reference, &digest, opts);
    // A tag looked up again after its time may still name the digest whose facts are cached.
    if let Some(f) = facts_file.as_deref().and_then(read_json::<ImageFacts>) {
        return Ok(f);
    }
    let (manifest, manifest_digest) = match session.manifest(&digest).await? {
        OciManifest::Image(m) => (m, digest.clone()),
        OciManifest::ImageIndex(index) => {
            let Some(d) = pick_platform(&index.manifests, &opts.platform) else {
                return Err(format!(
                    "the image index {digest} has no image for {}",
                    opts.platform
                ));
            };
            match session.manifest(&d).await? {
                OciManifest::Image(m) => (m, d),
                OciManifest::ImageIndex(_) => {
                    return Err(format!("the image index {digest} names another index"))
                }
            }
        }
    };
    if manifest.config.size.max(0) as u64 > CONFIG_CAP {
        return Err(format!(
            "the image config is {} bytes",
            manifest.config.size
        ));
    }
    let res = session
        .blob(&manifest.config.digest)
        .await
        .map_err(|e| format!("the image config: {e}"))?;
    let config = session.body(res, CONFIG_CAP, "the image config").await?;
    verify("the image config", &config, &manifest.config.digest)?;
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
        session: &session,
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
    let program = match crate::go::command::sign_of_words(&words, 0) {
        Some(crate::go::command::CommandSign::Program { word, language }) if language != "go" => {
            return Ok(Runtime::Interpreter {
                language: language.to_string(),
                why: format!("its entrypoint runs {word}"),
            })
        }
        Some(crate::go::command::CommandSign::Script(word)) => {
            return Ok(Runtime::Interpreter {
                language: "shell".into(),
                why: format!("its entrypoint runs the shell script {word}"),
            })
        }
        Some(crate::go::command::CommandSign::Program { word, .. }) => word,
        None => *words
            .get(crate::go::command::program_start(&words))
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
    let Some((path, found)) = layers.find(candidates).await? else {
        return Ok(Runtime::Unknown(format!(
            "the entrypoint {program} is not in the image"
        )));
    };
    let shown = format!("/{path}");
    let bytes = match found {
        Found::File(bytes) => bytes,
        Found::TooLarge(size) => {
            return Ok(Runtime::Unknown(format!(
                "its entrypoint {shown} is {size} bytes, more than the {} MiB read of one",
                ENTRYPOINT_CAP >> 20
            )))
        }
        _ => {
            return Ok(Runtime::Unknown(format!(
                "the entrypoint {program} is not a file"
            )))
        }
    };
    if let Some(line) = bytes.strip_prefix(b"#!") {
        let line = line.split(|&b| b == b'\n').next().unwrap_or(&[]);
        let line = String::from_utf8_lossy(line);
        let words: Vec<&str> = line.split_whitespace().collect();
        let language = match crate::go::command::sign_of_words(&words, 0) {
            Some(crate::go::command::CommandSign::Program { language, .. }) => language,
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
    session: &'a Session<'a>,
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
    ) -> Result<Option<(String, Found)>, String> {
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
                        Some(f) if f.is_answer() => {
                            answer = Some(c.clone());
                            break;
                        }
                        Some(_) => {}
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
                    .find(|c| state.get(*c).is_some_and(Found::is_answer))
                    .cloned();
            }
            let Some(path) = answer else { return Ok(None) };
            match state.remove(&path) {
                Some(Found::Link(target)) => {
                    let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
                    let next = if target.starts_with('/') {
                        target
                    } else {
                        format!("{dir}/{target}")
                    };
                    candidates = vec![layers::normalize(&next)];
                }
                Some(found @ (Found::File(_) | Found::TooLarge(_))) => {
                    return Ok(Some((path, found)))
                }
                _ => return Ok(None),
            }
        }
        Err("the entrypoint is behind too many symbolic links".into())
    }

    /// Stream one layer into [`layers::scan`], which runs on its own thread and hangs up when
    /// it has its answer. The rest of the layer is still read, to its end: what the scanner
    /// found counts only when every byte of the layer is the content its digest names.
    async fn scan(
        &mut self,
        layer: &OciDescriptor,
        wanted: &[String],
    ) -> Result<HashMap<String, Found>, String> {
        if wanted.is_empty() {
            return Ok(HashMap::new());
        }
        let size = layer.size.max(0) as u64;
        if size > self.cap {
            return Err(format!(
                "layer {} is {} bytes, above the cap of {}",
                layer.digest, layer.size, self.cap
            ));
        }
        let registry = &self.session.registry;
        let res = self
            .session
            .blob(&layer.digest)
            .await
            .map_err(|e| format!("layer {}: {e}", layer.digest))?;
        let mut stream = res.bytes_stream();
        let (tx, rx) = std::sync::mpsc::channel::<std::io::Result<bytes_chunk::Chunk>>();
        let wanted = wanted.to_vec();
        let mut scanner = Some(std::thread::spawn(move || {
            layers::scan(bytes_chunk::Reader::new(rx), &wanted, ENTRYPOINT_CAP)
        }));
        let join = |s: std::thread::JoinHandle<Result<HashMap<String, Found>, String>>| {
            s.join()
                .unwrap_or_else(|_| Err("the layer reader failed".to_string()))
        };
        let mut scanned = None;
        let mut hash = Sha256::new();
        let mut read = 0u64;
        let mut tx = Some(tx);
        // Why the download broke off, which the scanner only sees as a failed read.
        let mut broke = None;
        while let Some(chunk) = stream.next().await {
            let chunk = match chunk {
                Ok(c) => c,
                Err(e) => {
                    let mut why = with_causes(&e);
                    if why.contains("timed out") {
                        why.push_str(&format!(
                            " (nothing arrived for {}s, the --registry-timeout)",
                            self.timeout.as_secs()
                        ));
                    }
                    if let Some(tx) = &tx {
                        let _ = tx.send(Err(std::io::Error::other(why.clone())));
                    }
                    broke = Some(why);
                    break;
                }
            };
            read += chunk.len() as u64;
            if read > size {
                broke = Some(format!(
                    "the registry sent more than the layer's {size} bytes"
                ));
                break;
            }
            hash.update(&chunk);
            if tx
                .as_ref()
                .is_some_and(|t| t.send(Ok(chunk.to_vec())).is_err())
            {
                // The scanner hung up: its scan has returned. Only an answer is worth the rest
                // of the layer.
                tx = None;
                let r = scanner.take().map(join);
                let failed = !matches!(r, Some(Ok(_)));
                scanned = r;
                if failed {
                    break;
                }
            }
        }
        drop(tx);
        self.bytes_read += read;
        let scanned = match (scanned, scanner) {
            (Some(r), _) => r,
            (None, Some(s)) => join(s),
            (None, None) => Err("the layer reader failed".to_string()),
        };
        let complete = broke.is_none() && read == size;
        let matches = complete && finish(hash) == layer.digest;
        match (scanned, broke) {
            (Ok(found), None) if matches => Ok(found),
            (Ok(_), None) if !complete => Err(format!(
                "layer {}: registry {registry} sent {read} of its {size} bytes",
                layer.digest
            )),
            (Ok(_), None) => Err(format!(
                "layer {}: corrupt layer: its content does not match its digest; what it \
                 holds was not used",
                layer.digest
            )),
            (Err(_), None) if complete && !matches => Err(format!(
                "layer {}: corrupt layer: its content does not match its digest",
                layer.digest
            )),
            (Err(e), None) => Err(format!("layer {}: {e}", layer.digest)),
            (_, Some(why)) => Err(format!(
                "layer {}: the download from registry {registry} broke off after {read} of \
                 {size} bytes: {why}",
                layer.digest
            )),
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

    /// The references read without the regular expression are read as it reads them; the
    /// usual shapes are read so, and what it refuses is never accepted.
    #[test]
    fn usual_references_read_as_the_grammar_reads_them() {
        let digest = format!("sha256:{}", "ab12".repeat(16));
        let mut refs: Vec<String> = [
            "nginx",
            "nginx:1.27.2",
            "acme/api:v1",
            "docker.io/acme/api:1",
            "index.docker.io/x:1",
            "docker.io/nginx",
            "ghcr.io/acme/svc:1.2.3",
            "registry.example.com/team/svc:2.0",
            "localhost/x",
            "localhost:5000/a/b:c",
            "127.0.0.1:5000/x:y",
            "host:80/a",
            "a.b/c",
            "a__b/c_d.e-f--g:T_a.g-1",
            "my-registry.local:5000/x",
            "Reg.Example/x",
            "python:3.12-slim",
            "eclipse-temurin:21-jre",
            "UPPER/x",
            "x/UPPER",
            "a..b/c",
            "a/b-",
            "a/-b",
            "a/b._c",
            "a/b___c",
            "-a.io/b",
            "a-.io/b",
            "a.io:/b",
            "a.io:x/b",
            "a:b:c",
            "a:",
            ":a",
            "",
            "/a",
            "a/",
            "a//b",
            "a/b:.x",
            "a/b:-x",
            "a b",
            "a@b",
            "a:é",
            "host:5000",
            "x:tag@sha256:short",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        refs.push(format!("nginx@{digest}"));
        refs.push(format!("ghcr.io/acme/api:1@{digest}"));
        refs.push(format!("a/b@sha512:{}", "0".repeat(128)));
        refs.push(format!("a/{}", "b".repeat(300)));
        refs.push(format!("a:{}", "t".repeat(129)));
        let mut usual = 0;
        for r in &refs {
            if let Some(ours) = usual_reference(r) {
                assert_eq!(Some(ours), Reference::try_from(r.as_str()).ok(), "{r:?}");
                usual += 1;
            }
        }
        assert!(usual >= 20, "{usual}");
        for r in [
            "nginx:1.27.2",
            "ghcr.io/acme/svc:1.2.3",
            "localhost:5000/a/b:c",
        ] {
            assert!(usual_reference(r).is_some(), "{r}");
        }
    }

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
    fn only_public_registries_and_listed_ones_are_read() {
        assert!(allowed("ghcr.io", &[]));
        assert!(allowed("index.docker.io", &[]));
        assert!(allowed("europe-docker.pkg.dev", &[]));
        assert!(allowed("GHCR.IO:443", &[]));
        assert!(!allowed("ghcr.io:8080", &[]));
        assert!(!allowed("pkg.dev", &[]));
        assert!(!allowed("evil-ghcr.io", &[]));
        assert!(!allowed("127.0.0.1:5000", &[]));
        assert!(!allowed("localhost:5000", &[]));
        assert!(!allowed("[::1]:5000", &[]));
        assert!(!allowed("169.254.169.254", &[]));
        let listed = [
            "127.0.0.1".to_string(),
            "reg.lan:5000".into(),
            "*.corp".into(),
        ];
        assert!(allowed("127.0.0.1:5000", &listed));
        assert!(allowed("reg.lan:5000", &listed));
        assert!(!allowed("reg.lan:6000", &listed));
        assert!(allowed("a.b.corp", &listed));
        assert!(allowed("[::1]:5000", &["::1".into()]));
        // A registry listed with its port trusts its host's addresses, which carry no port.
        let opts = Options {
            insecure: vec![
                "127.0.0.1:5000".into(),
                "[::1]:5001".into(),
                "Reg.Lan:80".into(),
            ],
            ..Options::default()
        };
        let trusted = trusted_hosts(&opts);
        let url = |u: &str| reqwest::Url::parse(u).unwrap();
        assert_eq!(
            refused_address(&url("http://127.0.0.1:5000/v2/"), &trusted),
            None
        );
        assert_eq!(
            refused_address(&url("http://[::1]:5001/v2/"), &trusted),
            None
        );
        assert!(trusted.contains(&"reg.lan".to_string()));
        assert!(refused_address(&url("http://10.0.0.1:5000/v2/"), &trusted).is_some());
    }

    #[test]
    fn addresses_of_the_local_network_are_not_public() {
        for a in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:10.0.0.1",
        ] {
            assert!(!public_address(a.parse().unwrap()), "{a}");
        }
        for a in ["140.82.112.34", "2606:50c0:8000::154", "::ffff:8.8.8.8"] {
            assert!(public_address(a.parse().unwrap()), "{a}");
        }
        let url = |u: &str| reqwest::Url::parse(u).unwrap();
        assert!(refused_address(&url("http://169.254.169.254/x"), &[]).is_some());
        assert!(refused_address(&url("http://[::1]:5000/v2/"), &[]).is_some());
        assert!(refused_address(&url("http://[::1]:5000/v2/"), &["::1".into()]).is_none());
        assert!(refused_address(&url("https://ghcr.io/v2/"), &[]).is_none());
    }

    #[test]
    fn challenges_and_digests_are_read_strictly() {
        let (scheme, p) = parse_challenge(
            r#"Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a:pull""#,
        );
        assert_eq!(scheme, "Bearer");
        assert_eq!(p["realm"], "https://auth.example/token");
        assert_eq!(p["service"], "registry.example");
        assert_eq!(p["scope"], "repository:a:pull");
        let (scheme, p) = parse_challenge(r#"Basic realm="a \"b\", c""#);
        assert_eq!(scheme, "Basic");
        assert_eq!(p["realm"], r#"a "b", c"#);
        assert_eq!(basic_header("alice", "pw"), "Basic YWxpY2U6cHc=");
        assert_eq!(basic_header("a", "b"), "Basic YTpi");
        let empty = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        assert_eq!(sha256_hex(Vec::new()), empty);
        assert!(verify("the manifest", b"", empty).is_ok());
        assert!(verify("the manifest", b"x", empty).is_err());
        assert!(check_digest(empty).is_ok());
        assert!(check_digest("sha256:../../etc").is_err());
        assert!(check_digest(&empty.to_uppercase()).is_err());
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

    /// A snapshot written by `save` is read back entry by entry: names that need escaping in
    /// JSON and names that are prefixes of others are found, a name it lacks is not, an entry
    /// that does not decode is no answer, and a snapshot of other directories or another
    /// platform, or in the earlier one-object form, is not used at all.
    #[test]
    fn a_snapshot_is_searched_by_its_sorted_lines() {
        let dir = tempfile::tempdir().unwrap();
        let opts = Options {
            cache_dir: Some(dir.path().to_path_buf()),
            platform: "linux/amd64".into(),
            ..Default::default()
        };
        for d in ["tags", "facts"] {
            std::fs::create_dir_all(dir.path().join("images").join(d)).unwrap();
        }
        let settled = stamps(&opts);
        let images = [
            "a",
            "ab",
            "b:1",
            "quote\"and\\slash",
            "tab\tline\ncontrol\u{1}",
            "ünïcode/é:1",
            "z",
        ];
        let cache = OfflineCache {
            opts: opts.clone(),
            snapshot: None,
            stamps: settled,
            read: std::sync::Mutex::new(
                images
                    .iter()
                    .map(|i| (i.to_string(), made_up_facts(i)))
                    .collect(),
            ),
        };
        cache.save();
        let file = snapshot_file(&opts).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        let read = |text: &str| SnapshotText::parse(text.to_string(), settled, "linux/amd64");
        let snapshot = read(&text).expect("the snapshot is read");
        for image in images {
            assert_eq!(snapshot.get(image), Some(made_up_facts(image)), "{image:?}");
        }
        for absent in ["", "0", "aa", "b", "b:10", "zz", "quote"] {
            assert_eq!(snapshot.get(absent), None, "{absent:?}");
        }

        let broken = text.replacen("{\"digest\"", "{\"digest\":1,\"x\"", 1);
        let broken = read(&broken).unwrap();
        assert_eq!(broken.get("a"), None);
        assert_eq!(broken.get("ab"), Some(made_up_facts("ab")));

        assert!(SnapshotText::parse(text.clone(), settled, "linux/arm64").is_none());
        assert!(SnapshotText::parse(text.clone(), Some([None, None]), "linux/amd64").is_none());
        let head = text.lines().next().unwrap().trim_end_matches('}');
        let one_object = format!("{head},\"facts\":{{}}}}");
        assert!(read(&one_object).is_none());
        assert!(read(&format!("{one_object}\n")).is_none());

        // A later save keeps the entries it did not read again, as they were.
        let later = OfflineCache {
            opts: opts.clone(),
            snapshot: read(&text),
            stamps: settled,
            read: std::sync::Mutex::new([("c".to_string(), made_up_facts("c"))].into()),
        };
        later.save();
        let again = read(&std::fs::read_to_string(&file).unwrap()).unwrap();
        for image in images.iter().chain(&["c"]) {
            assert_eq!(again.get(image), Some(made_up_facts(image)), "{image:?}");
        }
    }
}
