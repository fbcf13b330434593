//! The container image (docker/Dockerfile), read as Docker reads it: its build stage builds the
//! `cluster` feature and checks the binary has it, and its final stage, `scratch`, carries the CA
//! bundle where the TLS client finds it. No Docker engine is needed: the image itself is built
//! only where one runs (this checks the file, not an image).

/// The Dockerfile's stages: each one's `FROM` line and its instructions, continuation lines
/// joined and comments dropped.
fn stages() -> Vec<(String, Vec<String>)> {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docker/Dockerfile")).unwrap();
    let mut instructions = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('#') || (trimmed.is_empty() && current.is_empty()) {
            continue;
        }
        match trimmed.strip_suffix('\\') {
            Some(part) => {
                current.push_str(part);
                current.push(' ');
            }
            None => {
                current.push_str(trimmed);
                instructions.push(std::mem::take(&mut current));
            }
        }
    }
    let mut stages: Vec<(String, Vec<String>)> = Vec::new();
    for i in instructions.into_iter().filter(|i| !i.is_empty()) {
        if i.starts_with("FROM ") {
            stages.push((i, Vec::new()));
        } else {
            stages
                .last_mut()
                .expect("an instruction before FROM")
                .1
                .push(i);
        }
    }
    stages
}

/// Where the final image keeps its CA bundle: the first file the TLS client (rustls'
/// native-certs loader) looks for on Linux, and the one Alpine's ca-certificates writes.
const BUNDLE: &str = "/etc/ssl/certs/ca-certificates.crt";

#[test]
fn the_image_builds_the_cluster_feature_and_ships_ca_certificates() {
    let stages = stages();
    assert_eq!(stages.len(), 2, "{stages:#?}");
    let (from, build) = &stages[0];
    assert!(from.ends_with(" AS build"), "{from}");
    let cargo = build
        .iter()
        .find(|i| i.starts_with("RUN ") && i.contains("cargo build"))
        .expect("the build stage runs cargo build");
    let words: Vec<&str> = cargo.split_whitespace().collect();
    assert!(
        words.contains(&"--release") && words.contains(&"--locked"),
        "{cargo}"
    );
    let features: Vec<&str> = words
        .iter()
        .zip(words.iter().skip(1))
        .filter(|(flag, _)| **flag == "--features" || **flag == "-F")
        .flat_map(|(_, list)| list.split(','))
        .collect();
    assert!(features.contains(&"cluster"), "{cargo}");
    assert!(!words.contains(&"--no-default-features"), "{cargo}");
    // The feature named is Cargo's, and the binary's own refusal is what the stage checks for.
    let manifest =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")).unwrap();
    assert!(
        manifest.contains("\ncluster = ["),
        "Cargo.toml has no `cluster` feature"
    );
    let refusal = "without cluster support";
    let cluster_cli =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/cli/cluster.rs"))
            .unwrap();
    assert!(cluster_cli.contains(refusal));
    assert!(
        build
            .iter()
            .any(|i| i.starts_with("RUN ") && i.contains(refusal) && i.contains("exit 1")),
        "the build stage does not refuse a binary without `cluster`: {build:#?}"
    );
    // The bundle: installed in the build stage, copied into the final one, and named.
    assert!(
        build
            .iter()
            .any(|i| i.starts_with("RUN apk add") && i.contains(" ca-certificates")),
        "{build:#?}"
    );
    let (from, last) = &stages[1];
    assert_eq!(from, "FROM scratch");
    assert!(
        last.contains(&format!("COPY --from=build {BUNDLE} {BUNDLE}")),
        "{last:#?}"
    );
    assert!(
        last.contains(&format!("ENV SSL_CERT_FILE={BUNDLE}")),
        "{last:#?}"
    );
    assert!(
        last.iter().any(|i| i == r#"ENTRYPOINT ["golint-k8s"]"#),
        "{last:#?}"
    );
}
