//! Machine formats other tools parse: GitHub workflow commands (snapshotted, escaping included).

use assert_cmd::Command;

#[test]
fn github_annotations_escape_commas_colons_and_newlines() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/deployment.yaml"
    ))
    .unwrap();
    // A file name with a comma and a colon must not break the property list.
    let out = Command::cargo_bin("golint-k8s")
        .unwrap()
        .args([
            "lint",
            "-",
            "--format",
            "github",
            "--stdin-filename",
            "deploy/shop,eu:west.yaml",
        ])
        .write_stdin(text)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let s = String::from_utf8(out.stdout).unwrap();
    for line in s.lines() {
        let (head, message) = line
            .split_once("::")
            .map(|(_, rest)| rest.split_once("::").unwrap())
            .unwrap();
        // Exactly the six properties: the escaped file name adds no separators.
        assert_eq!(head.split(',').count(), 6, "{head}");
        assert!(head.contains("file=deploy/shop%2Ceu%3Awest.yaml"), "{head}");
        assert!(!message.contains('\n') && !message.contains('\r'));
    }
    assert!(
        s.contains("%0Ajudged Go because"),
        "notes ride on escaped newlines"
    );
    // The snapshot keeps the name and place it had when this file was its own test binary.
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        insta::assert_snapshot!(
            "formats__github_annotations_escape_commas_colons_and_newlines",
            s
        )
    });
}

/// Every format goes through one interface, which `lint` streams file by file as it lints, and
/// which reports already at hand (`--new-from-rev`, `fix`, `cluster`) are written through at once.
/// Against a revision before any file existed every finding is new, so both ways must write the
/// same bytes and exit alike: in every format, with findings, clean files, a file that is not
/// YAML and one that is not text, and with `--statistics` and `--quiet`.
#[test]
fn every_format_streams_the_bytes_it_writes_for_reports_at_hand() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .current_dir(root)
            .args(["-c", "user.email=ci@example.com", "-c", "user.name=ci"])
            .args(args)
            .output()
            .expect("git");
        assert!(out.status.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["commit", "-q", "--allow-empty", "-m", "empty"]);
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut copied = 0;
    for rule in ["GK000", "GK101", "GK102", "GK201", "GK203", "GK301"] {
        for entry in std::fs::read_dir(fixtures.join(rule)).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.ends_with(".yaml") && (name.starts_with("fire-") || name.starts_with("silent-"))
            {
                let to = root.join("manifests").join(rule).join(&name);
                std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                std::fs::copy(&path, &to).unwrap();
                copied += 1;
            }
        }
    }
    assert!(copied > 20, "{copied} fixtures");
    std::fs::write(root.join("manifests/binary.yaml"), b"kind: \x00\xff\xfe").unwrap();
    let lint = |extra: &[&str]| {
        let out = Command::cargo_bin("golint-k8s")
            .unwrap()
            .current_dir(root)
            .args(["lint", "manifests"])
            .args(extra)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let formats = [
        "human",
        "concise",
        "json",
        "sarif",
        "github",
        "gitlab",
        "junit",
        "checkstyle",
    ];
    for format in formats {
        for options in [&[][..], &["--statistics"], &["--quiet"]] {
            let mut args = vec!["--format", format];
            args.extend_from_slice(options);
            let streamed = lint(&args);
            args.extend_from_slice(&["--new-from-rev", "HEAD"]);
            let at_hand = lint(&args);
            assert_eq!(streamed.0, Some(1), "{format} {options:?}");
            assert!(streamed.1.contains("GK101"), "{format} {options:?}");
            assert_eq!(streamed, at_hand, "{format} {options:?}");
        }
    }
}
