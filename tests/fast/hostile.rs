//! Hostile input and failure, through the real binary: whatever arrives, golint-k8s must answer in
//! bounded time and memory with exit code 0, 1 or 2 and a message that names the file, never
//! panic or hang, and `fix` must never leave a file half-written or lose a byte of it.
//!
//! `tests/cli.rs` already covers the simplest hostile inputs (`hostile_inputs_are_bounded`,
//! `closed_pipe_does_not_panic`, ...); this file covers what they leave out: the same inputs
//! through `fix`, inputs that are small but expand (alias and merge bombs) or grow work faster
//! than their size, limits on standard input, unreadable files as root, a directory of 100,000
//! files, closed pipes on both output streams, `fix` killed half-way, and two `fix` runs at once.
//! docs/robustness.md lists which test covers which input, and what each one cost.
//!
//! Every run of the binary goes through [`run`], which kills it at a generous time limit: a hang
//! must fail the test, not stall the suite. The limits are sanity bounds, not benchmarks.
//!
//! Tests marked `#[ignore = "bug: …"]` reproduce product bugs that are still open; run them with
//! `cargo test --test fast -- hostile:: --ignored`.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// More than any input here needs in a debug build, yet short enough that a hang fails quickly.
const LIMIT: Duration = Duration::from_secs(120);

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("golint-k8s")
}

/// `args` with `--assume-go` after a `lint` or `fix`: the manifests here stand for a repository
/// whose images are all Go, so findings gate and fixes are safe as the rules give them.
fn all_go<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut v = args.to_vec();
    if matches!(args.first(), Some(&("lint" | "fix"))) {
        v.push("--assume-go");
    }
    v
}

/// A Go container with CPU and memory limits and neither GOMAXPROCS nor GOMEMLIMIT: two safe
/// fixes (GK201, GK101), after which it is clean.
const FIXABLE: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      containers:
        - name: api
          image: ghcr.io/acme/api:1.0
          resources:
            requests: {cpu: "1", memory: 512Mi}
            limits: {cpu: "2", memory: 512Mi}
"#;

/// A manifest with nothing to report.
const CLEAN: &str = r#"apiVersion: v1
kind: Pod
metadata:
  name: clean
spec:
  containers:
    - name: api
      image: ghcr.io/acme/api:1.0
      env:
        - name: GOMEMLIMIT
          value: "460MiB"
      resources:
        requests: {cpu: "1", memory: 512Mi}
        limits: {memory: 512Mi}
"#;

/// What a finished run of the binary left behind.
#[derive(Debug)]
struct Ran {
    /// None when a signal ended it.
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
    took: Duration,
}

impl Ran {
    fn out(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", self.out(), self.stderr))
    }

    /// The contract every run keeps, whatever the input: an exit code of 0, 1 or 2, no panic.
    fn sane(&self) -> &Self {
        assert!(
            matches!(self.code, Some(0..=2)) && !self.stderr.contains("panicked"),
            "exit {:?}\nstderr: {}",
            self.code,
            self.stderr
        );
        self
    }
}

/// Where a run's standard input comes from.
enum Input {
    Null,
    Bytes(Vec<u8>),
    /// A pipe whose writing end is closed at once.
    Closed,
}

/// Run `cmd` to completion or to `limit`, whichever comes first; reaching the limit kills it and
/// fails the test. Output is drained on threads, so a child filling a pipe never blocks.
fn run_cmd(mut cmd: Command, input: Input, limit: Duration) -> Ran {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.stdin(match input {
        Input::Null => Stdio::null(),
        Input::Bytes(_) | Input::Closed => Stdio::piped(),
    });
    let started = Instant::now();
    let mut child = cmd.spawn().expect("spawn golint-k8s");
    let writer = match input {
        Input::Bytes(bytes) => {
            let mut stdin = child.stdin.take().unwrap();
            // A child that stops reading early closes the pipe: that is its right, not an error.
            Some(std::thread::spawn(move || {
                let _ = stdin.write_all(&bytes);
            }))
        }
        Input::Closed => {
            drop(child.stdin.take());
            None
        }
        Input::Null => None,
    };
    let (out, err) = drain(&mut child);
    let code = wait_limited(&mut child, started, limit, &format!("{cmd:?}"));
    if let Some(w) = writer {
        w.join().unwrap();
    }
    let ran = Ran {
        code,
        stdout: out.join().unwrap(),
        stderr: String::from_utf8_lossy(&err.join().unwrap()).into_owned(),
        took: started.elapsed(),
    };
    // Shown with `--nocapture`: what each input cost, for docs/robustness.md.
    let args: Vec<String> = cmd
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    println!(
        "timing: golint-k8s {}: exit {:?} in {} ms",
        args.join(" "),
        ran.code,
        ran.took.as_millis()
    );
    ran
}

type Reader = std::thread::JoinHandle<Vec<u8>>;

fn drain(child: &mut Child) -> (Reader, Reader) {
    fn reader(mut r: impl Read + Send + 'static) -> Reader {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            buf
        })
    }
    (
        reader(child.stdout.take().unwrap()),
        reader(child.stderr.take().unwrap()),
    )
}

/// Wait for `child`, killing it and failing the test at `limit`.
fn wait_limited(child: &mut Child, started: Instant, limit: Duration, what: &str) -> Option<i32> {
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running after {limit:?}, killed: {what}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// `golint-k8s <args>` in `dir`.
fn run(dir: &Path, args: &[&str], input: Input) -> Ran {
    let mut cmd = Command::new(bin());
    cmd.current_dir(dir).args(all_go(args));
    run_cmd(cmd, input, LIMIT)
}

/// `golint-k8s <args>` in `dir`, under a 1 GiB address-space limit: an input that makes it
/// allocate without bound ends in an allocation failure (an abort), not in swapping the machine.
fn run_memory_limited(dir: &Path, args: &[&str], input: Input) -> Ran {
    let mut cmd = Command::new("sh");
    cmd.current_dir(dir)
        .arg("-c")
        .arg("ulimit -v 1048576 && exec \"$0\" \"$@\"")
        .arg(bin())
        .args(all_go(args));
    run_cmd(cmd, input, LIMIT)
}

fn write(path: &Path, content: impl AsRef<[u8]>) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, content).unwrap();
}

fn findings(v: &Value) -> &Vec<Value> {
    v["findings"].as_array().expect("findings")
}

fn codes(v: &Value) -> Vec<String> {
    findings(v)
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect()
}

#[cfg(unix)]
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    // A file we create is owned by our effective uid.
    let f = tempfile::NamedTempFile::new().unwrap();
    f.as_file().metadata().unwrap().uid() == 0
}

// ---------------------------------------------------------------------------------------------
// Inputs that expand: alias and merge bombs.

/// The classic billion laughs, next to a fixable Deployment: the fixer must fix the Deployment
/// and leave the bomb's bytes exactly as they were.
#[test]
fn billion_laughs_is_fixed_around_not_expanded() {
    let mut bomb = String::from(
        "lol: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for i in 1..10u8 {
        let (prev, cur) = ((b'a' + i - 1) as char, (b'a' + i) as char);
        let refs = vec![format!("*{prev}"); 9].join(",");
        bomb.push_str(&format!("l{cur}: &{cur} [{refs}]\n"));
    }
    // The bomb lives in the Deployment's own metadata, where the linter walks.
    let text = FIXABLE.replace(
        "metadata:\n  name: api\n",
        &format!(
            "metadata:\n  name: api\n  labels:\n{}",
            bomb.lines()
                .map(|l| format!("    {l}\n"))
                .collect::<String>()
        ),
    );
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("bomb.yaml"), &text);
    let ran = run(
        dir.path(),
        &["fix", "bomb.yaml", "--format", "json"],
        Input::Null,
    );
    ran.sane();
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let fixed = std::fs::read_to_string(dir.path().join("bomb.yaml")).unwrap();
    assert!(fixed.contains("GOMEMLIMIT") && fixed.contains("GOMAXPROCS"));
    for line in text.lines().filter(|l| l.contains('&')) {
        assert!(fixed.contains(line), "bomb line lost: {line}");
    }
    assert!(ran.took < LIMIT);
}

/// Merge keys nested nine deep, nine wide (9^9 merged mappings if expanded), used by the pod
/// spec, the container and its resources: every lookup the rules make goes through them.
#[test]
fn merge_key_bomb_is_bounded() {
    let mut text = String::from("m0: &m0 {a: 1}\n");
    for k in 1..10 {
        let refs = vec![format!("*m{}", k - 1); 9].join(", ");
        text.push_str(&format!("m{k}: &m{k} {{<<: [{refs}], k{k}: 1}}\n"));
    }
    text.push_str(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  <<: *m9\n  containers:\n  - name: c\n    <<: *m9\n    image: ghcr.io/acme/api:1.0\n    resources: {<<: *m9, limits: {<<: *m9, memory: 1Gi}}\n",
    );
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("merge.yaml"), &text);
    let ran = run(
        dir.path(),
        &["lint", "merge.yaml", "--format", "json"],
        Input::Null,
    );
    ran.sane();
    assert!(codes(&ran.json()).contains(&"GK101".to_string()));
    let ran = run(dir.path(), &["fix", "merge.yaml"], Input::Null);
    ran.sane();
}

/// A `kind: List` whose items are aliases of Lists of aliases: 30^4 = 810,000 Pods from 879
/// bytes if every expansion were an object. When the object walk expanded them, this input took
/// 52 s and 2.5 GB in a release build, and 60 items per level (1.6 KB) exhausted the machine's
/// memory; now a node reached again through an alias is the same object. Run under a 1 GiB
/// address-space limit so that a regression fails as an abort.
#[test]
fn list_alias_bomb_is_bounded() {
    let text = list_bomb(30);
    assert!(text.len() < 1000);
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("list.yaml"), &text);
    let ran = run_memory_limited(
        dir.path(),
        &["lint", "list.yaml", "--format", "concise"],
        Input::Null,
    );
    ran.sane();
    assert!(
        ran.took < Duration::from_secs(60),
        "took {:?} for {} bytes",
        ran.took,
        text.len()
    );
}

/// `fan^4` Pods in one List document, each item an alias.
fn list_bomb(fan: usize) -> String {
    let pod = "{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: ghcr.io/acme/api:1.0, resources: {limits: {memory: 1Gi}}}]}}";
    let mut text = format!("apiVersion: v1\nkind: List\nx0: &l0 {pod}\n");
    for k in 1..4 {
        let refs = vec![format!("*l{}", k - 1); fan].join(", ");
        text.push_str(&format!("x{k}: &l{k} {{kind: List, items: [{refs}]}}\n"));
    }
    text.push_str(&format!("items: [{}]\n", vec!["*l3"; fan].join(", ")));
    text
}

/// The aliased object is linted once, and its findings point at the one place it is written.
#[test]
fn small_list_of_aliases_is_linted() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("list.yaml"), list_bomb(3));
    let ran = run(
        dir.path(),
        &["lint", "list.yaml", "--format", "json"],
        Input::Null,
    );
    ran.sane();
    let v = ran.json();
    assert_eq!(v["summary"]["containers"], 1, "{v}");
    assert!(!findings(&v).is_empty(), "{v}");
    assert!(findings(&v).iter().all(|f| f["line"] == 3), "{v}");
}

// ---------------------------------------------------------------------------------------------
// Inputs whose cost grows faster than their size. Each is a few MB at most, far under the
// 64 MiB cap, and takes well under a second where the work is linear; the quadratic versions
// take minutes (and hours at the cap).

fn assert_bounded(name: &str, text: &str, limit: Duration) {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join(name), text);
    let mut cmd = Command::new(bin());
    cmd.current_dir(dir.path())
        .args(["lint", "--format", "concise", name]);
    let ran = run_cmd(cmd, Input::Null, limit + Duration::from_secs(1));
    ran.sane();
    assert!(
        ran.took < limit,
        "{name} ({} bytes) took {:?}",
        text.len(),
        ran.took
    );
}

/// A merge key in a mapping with 40,000 keys (390 KB). Every lookup of a key the mapping lacks
/// collects its entries; when each was checked against all collected before, this took 26 s in
/// a release build.
#[test]
fn wide_mapping_with_a_merge_key_is_bounded() {
    let mut text = String::from("<<: {}\n");
    for i in 0..40_000 {
        text.push_str(&format!("k{i}: v\n"));
    }
    assert_bounded("wide.yaml", &text, Duration::from_secs(60));
}

/// A container with 50,000 env entries (2.3 MB). When GK303 compared each entry with every
/// other, this took 16 s in a release build.
#[test]
fn long_env_list_is_bounded() {
    let env: String = (0..50_000)
        .map(|i| format!("        - name: E{i}\n          value: \"{i}\"\n"))
        .collect();
    let text = format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: c\n      image: ghcr.io/acme/api:1.0\n      env:\n{env}      resources:\n        limits: {{cpu: \"2\", memory: 512Mi}}\n"
    );
    assert_bounded("env.yaml", &text, Duration::from_secs(60));
}

/// 50,000 suppression comments on consecutive lines (1.8 MB). Each looks for the next line that
/// is not a comment; when each scanned all the comment lines after it, this took 22 s in a
/// release build.
#[test]
fn many_suppression_comments_are_bounded() {
    let text: String = (0..50_000)
        .map(|i| format!("# golint-k8s: ignore=GK101 -- reason {i}\n"))
        .chain([CLEAN.to_string()])
        .collect();
    assert_bounded("suppress.yaml", &text, Duration::from_secs(60));
}

/// 200,000 anchors and an alias to each (7 MB). When each alias was resolved by a linear search
/// of all anchors defined before it, this took 22 s in a release build.
#[test]
#[cfg_attr(
    not(feature = "heavy-tests"),
    ignore = "heavy tier: --features heavy-tests"
)]
fn many_anchors_are_bounded() {
    let text: String = (0..200_000)
        .map(|i| format!("k{i}: &a{i} v\n"))
        .chain((0..200_000).map(|i| format!("r{i}: *a{i}\n")))
        .collect();
    assert_bounded("anchors.yaml", &text, Duration::from_secs(60));
}

/// Large inputs whose work is linear: each stays far under the limit.
#[test]
fn large_linear_inputs_are_bounded() {
    let docs: String = (0..2_000)
        .map(|i| CLEAN.replace("name: clean", &format!("name: p{i}")))
        .collect::<Vec<_>>()
        .join("---\n");
    assert_bounded("documents.yaml", &docs, Duration::from_secs(60));
    let keys: String = (0..100_000).map(|i| format!("k{i}: v\n")).collect();
    assert_bounded("keys.yaml", &keys, Duration::from_secs(60));
    let flow = format!(
        "{{{}}}\n",
        (0..100_000)
            .map(|i| format!("k{i}: v"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    assert_bounded("flow.yaml", &flow, Duration::from_secs(60));
    let comments: String = (0..200_000)
        .map(|i| format!("# comment {i}\n"))
        .chain([CLEAN.to_string()])
        .collect();
    assert_bounded("comments.yaml", &comments, Duration::from_secs(60));
    assert_bounded(
        "empty-documents.yaml",
        &"---\n".repeat(200_000),
        Duration::from_secs(60),
    );
    assert_bounded(
        "long-key.yaml",
        &format!("{}: v\n", "k".repeat(4 << 20)),
        Duration::from_secs(60),
    );
}

/// CPU time (user and system, all threads) of `golint-k8s <args>` in `dir`, and its standard
/// output. CPU time rather than the wall clock: other tests and builds share the machine.
#[cfg(unix)]
// The child is reaped by `wait4`, which also reports its CPU time.
#[allow(clippy::zombie_processes)]
fn cpu_time(dir: &Path, args: &[&str]) -> (Duration, Vec<u8>) {
    let out_path = dir.join(format!("out-{}.txt", args.join("-").replace('/', "_")));
    let mut child = Command::new(bin())
        .current_dir(dir)
        .args(all_go(args))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn golint-k8s");
    let pid = child.id() as libc::pid_t;
    let started = Instant::now();
    loop {
        let mut status = 0;
        // SAFETY: an all-zero rusage is a valid value for wait4 to fill in.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: our own child, valid pointers to locals.
        let done = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if done == pid {
            assert!(
                libc::WIFEXITED(status) && matches!(libc::WEXITSTATUS(status), 0..=1),
                "golint-k8s {args:?}: status {status:#x}"
            );
            let t = |tv: libc::timeval| {
                Duration::from_secs(tv.tv_sec as u64) + Duration::from_micros(tv.tv_usec as u64)
            };
            let cpu = t(usage.ru_utime) + t(usage.ru_stime);
            println!(
                "timing: golint-k8s {}: {} ms CPU",
                args.join(" "),
                cpu.as_millis()
            );
            return (cpu, std::fs::read(&out_path).unwrap());
        }
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running after {LIMIT:?}, killed: golint-k8s {args:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// What a lint found, without places: (code, object name, container), sorted. `object` renames
/// the objects, so that one pod's containers compare with one pod per container.
fn finding_set(json: &[u8], object: impl Fn(&str) -> String) -> Vec<(String, String, String)> {
    let v: Value = serde_json::from_slice(json).expect("JSON");
    let mut set: Vec<(String, String, String)> = findings(&v)
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                object(f["object"]["name"].as_str().unwrap_or("")),
                f["container"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    set.sort();
    set
}

/// N items in one document (a `kind: List` of Deployments, as `kubectl get -o yaml` writes it;
/// one Pod with N containers) cost what N documents cost, give or take a small factor, to lint
/// and to fix; and find the same. Every finding located its list item, and every fix its place
/// and its collisions, by a pass over all the items before it: 20,000 Deployments in a List took
/// 6 to 8 s against 0.8 s as documents, a Pod of 50,000 containers 73 s to fix.
#[cfg(unix)]
#[test]
#[cfg_attr(
    not(feature = "heavy-tests"),
    ignore = "heavy tier: --features heavy-tests"
)]
fn items_of_one_document_cost_what_separate_documents_cost() {
    const N: usize = 12_000;
    let deployment = |i: usize| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d{i}\nspec:\n  template:\n    spec:\n      containers:\n      - name: api\n        image: ghcr.io/acme/api:1.0\n        resources:\n          limits: {{cpu: \"2\", memory: 512Mi}}\n"
        )
    };
    let container = |i: usize| {
        format!(
            "  - name: c{i}\n    image: ghcr.io/acme/api:1.0\n    resources:\n      limits: {{cpu: \"2\", memory: 512Mi}}\n"
        )
    };
    let pod = |name: &str| {
        format!("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n  containers:\n")
    };
    let mut list = String::from("apiVersion: v1\nkind: List\nitems:\n");
    for i in 0..N {
        for (j, line) in deployment(i).lines().enumerate() {
            list.push_str(if j == 0 { "- " } else { "  " });
            list.push_str(line);
            list.push('\n');
        }
    }
    let documents: Vec<String> = (0..N).map(deployment).collect();
    let mut one_pod = pod("p");
    for i in 0..N {
        one_pod.push_str(&container(i));
    }
    let pods: Vec<String> = (0..N)
        .map(|i| pod(&format!("p{i}")) + &container(i))
        .collect();

    let dir = tempfile::tempdir().unwrap();
    // Fixing is measured on the pod, where every fix of a round lands in one list; the List's
    // fixes land in separate objects and cost what its lint costs, twice over.
    let shapes = [
        (
            "list.yaml",
            list,
            "documents.yaml",
            documents.join("---\n"),
            false,
        ),
        ("pod.yaml", one_pod, "pods.yaml", pods.join("---\n"), true),
    ];
    for (one, one_text, many, many_text, fix) in &shapes {
        write(&dir.path().join(one), one_text);
        write(&dir.path().join(many), many_text);
        let (one_cpu, one_out) = cpu_time(dir.path(), &["lint", "--format", "json", one]);
        let (many_cpu, many_out) = cpu_time(dir.path(), &["lint", "--format", "json", many]);
        let same_pod = |name: &str| {
            if name.starts_with('p') {
                "p".into()
            } else {
                name.into()
            }
        };
        let (a, b) = (
            finding_set(&one_out, same_pod),
            finding_set(&many_out, same_pod),
        );
        assert!(a.len() >= N, "{one}: {} findings", a.len());
        assert!(a == b, "{one} and {many} find different things");
        assert!(
            one_cpu < 3 * many_cpu,
            "lint {one} took {one_cpu:?} of CPU, {many} {many_cpu:?}"
        );
        if !fix {
            continue;
        }
        let (one_cpu, _) = cpu_time(dir.path(), &["fix", one]);
        let (many_cpu, _) = cpu_time(dir.path(), &["fix", many]);
        assert!(
            one_cpu < 3 * many_cpu,
            "fix {one} took {one_cpu:?} of CPU, {many} {many_cpu:?}"
        );
        let fixed = std::fs::read_to_string(dir.path().join(one)).unwrap();
        assert_eq!(fixed.matches("GOMEMLIMIT").count(), N, "{one}");
    }
}

// ---------------------------------------------------------------------------------------------
// Deep nesting, long lines, size caps.

/// 10,000 levels of nesting in each syntax: GK000 at the line and column where the nesting limit
/// is crossed in a manifest, a note that says the same of any other file, and `fix` leaves the
/// file alone.
#[test]
#[cfg_attr(
    not(feature = "heavy-tests"),
    ignore = "heavy tier: --features heavy-tests"
)]
fn ten_thousand_nesting_levels_are_an_error_at_a_place() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, String, &str); 4] = [
        ("flow-seq.yaml", "[".repeat(10_000), "flow-seq.yaml:1:201:"),
        (
            "flow-map.yaml",
            "{a: ".repeat(10_000),
            "flow-map.yaml:1:801:",
        ),
        (
            "block-seq.yaml",
            (0..10_000)
                .map(|i| format!("{}- \n", " ".repeat(i)))
                .collect(),
            "block-seq.yaml:201:201:",
        ),
        (
            "compact-seq.yaml",
            format!("a:\n  {}x\n", "- ".repeat(10_000)),
            "compact-seq.yaml:2:401:",
        ),
    ];
    for (name, text, at) in &cases {
        write(&dir.path().join(name), text);
        let ran = run(
            dir.path(),
            &["lint", "--format", "concise", name],
            Input::Null,
        );
        ran.sane();
        // Nothing of a manifest in it: not judged, but the note still says where it breaks.
        assert_eq!(ran.code, Some(0), "{name}: {}", ran.stderr);
        let place = at.strip_prefix(&format!("{name}:")).unwrap();
        assert!(
            ran.stderr.contains(&format!("note: {name}: not linted"))
                && ran.stderr.contains(&format!("({place} invalid YAML")),
            "{name}: {}",
            ran.stderr
        );
        // In a manifest's stream, the same nesting is GK000 at the same place, three lines on.
        let manifest = format!("apiVersion: v1\nkind: List\n---\n{text}");
        let as_manifest = format!("manifest-{name}");
        write(&dir.path().join(&as_manifest), &manifest);
        let ran = run(
            dir.path(),
            &["lint", "--format", "concise", &as_manifest],
            Input::Null,
        );
        ran.sane();
        assert_eq!(ran.code, Some(1), "{name}: {}", ran.stderr);
        let (line, rest) = place.split_once(':').unwrap();
        let shifted = format!(
            "{as_manifest}:{}:{rest}",
            line.parse::<usize>().unwrap() + 3
        );
        assert!(
            ran.out().starts_with(&format!("{shifted} error GK000")),
            "{name}: {}",
            ran.out()
        );
        let ran = run(dir.path(), &["fix", name], Input::Null);
        ran.sane();
        assert_eq!(
            &std::fs::read_to_string(dir.path().join(name)).unwrap(),
            text,
            "{name} was changed"
        );
    }
}

/// A 1 MB line, in a value and as the whole manifest (JSON on one line): linted and fixed, the
/// long line kept byte for byte.
#[test]
#[cfg_attr(
    not(feature = "heavy-tests"),
    ignore = "heavy tier: --features heavy-tests"
)]
fn one_megabyte_lines_are_linted_and_fixed() {
    let dir = tempfile::tempdir().unwrap();
    let long = "x".repeat(1 << 20);
    let annotated = FIXABLE.replace(
        "metadata:\n  name: api\n",
        &format!("metadata:\n  name: api\n  annotations:\n    note: \"{long}\"\n"),
    );
    write(&dir.path().join("annotated.yaml"), &annotated);
    let labels: String = (0..60_000)
        .map(|i| format!("\"l{i}\": \"v{i}\", "))
        .collect();
    let json = format!(
        "{{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {{\"name\": \"p\", \"labels\": {{{labels}\"end\": \"x\"}}}}, \"spec\": {{\"containers\": [{{\"name\": \"c\", \"image\": \"ghcr.io/acme/api:1.0\", \"resources\": {{\"requests\": {{\"cpu\": \"1\", \"memory\": \"512Mi\"}}, \"limits\": {{\"cpu\": \"2\", \"memory\": \"512Mi\"}}}}}}]}}}}"
    );
    assert!(json.len() > 1 << 20 && !json.contains('\n'));
    write(&dir.path().join("one-line.json"), &json);
    let ran = run(dir.path(), &["fix", ".", "--format", "json"], Input::Null);
    ran.sane();
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let fixed = std::fs::read_to_string(dir.path().join("annotated.yaml")).unwrap();
    assert!(fixed.contains(&format!("    note: \"{long}\"\n")));
    assert!(fixed.contains("GOMEMLIMIT"));
    let fixed = std::fs::read_to_string(dir.path().join("one-line.json")).unwrap();
    assert!(fixed.contains("GOMEMLIMIT") && fixed.contains(&labels));
    let ran = run(dir.path(), &["fix", "--check", "."], Input::Null);
    assert_eq!(ran.sane().code, Some(0), "{}", ran.stderr);
}

/// A 100 MB manifest of one document (real YAML text, not a sparse file) is refused by size with
/// its name, in a process that may not use more than 1 GiB of address space, and the other files
/// are linted. (A stream of documents that large is linted a group at a time: see the next test.)
#[test]
fn hundred_megabyte_document_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.yaml");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&big).unwrap());
        f.write_all(b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n  k: |\n")
            .unwrap();
        let line = format!("    {}\n", "x".repeat(95));
        let mut written = 0;
        while written < 100_000_000 {
            f.write_all(line.as_bytes()).unwrap();
            written += line.len();
        }
    }
    write(&dir.path().join("ok.yaml"), FIXABLE);
    let ran = run_memory_limited(
        dir.path(),
        &["lint", "--format", "concise", "big.yaml", "ok.yaml"],
        Input::Null,
    );
    ran.sane();
    assert_eq!(ran.code, Some(1));
    let out = ran.out();
    assert!(
        out.lines()
            .any(|l| l.starts_with("big.yaml:1:1: error GK000")
                && l.contains("larger than the 64 MiB a document may have")),
        "{out}"
    );
    assert!(out.contains("ok.yaml:"), "{out}");
    let before = std::fs::metadata(&big).unwrap().len();
    let ran = run_memory_limited(dir.path(), &["fix", "big.yaml"], Input::Null);
    ran.sane();
    assert_eq!(std::fs::metadata(&big).unwrap().len(), before);
}

/// A 100 MB stream of documents, which was refused above 64 MiB, is linted a group of documents
/// at a time within 1 GiB of address space (one tree of it is some 1.5 GB), and `fix` leaves it
/// alone with a note, without building that tree either.
#[test]
#[cfg_attr(
    not(feature = "heavy-tests"),
    ignore = "heavy tier: --features heavy-tests"
)]
fn hundred_megabyte_stream_is_linted_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.yaml");
    let mut docs = 0;
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&big).unwrap());
        let doc = format!("{CLEAN}---\n");
        let mut written = 0;
        while written < 100_000_000 {
            f.write_all(doc.as_bytes()).unwrap();
            written += doc.len();
            docs += 1;
        }
    }
    let ran = run_memory_limited(
        dir.path(),
        &["lint", "--format", "json", "big.yaml"],
        Input::Null,
    );
    ran.sane();
    let out = ran.json();
    // The `---` after the last one starts an empty document, counted as the whole-file path
    // counts it.
    assert_eq!(out["summary"]["documents"], docs + 1, "{}", ran.stderr);
    assert!(
        out["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["code"] != "GK000"),
        "{}",
        ran.stderr
    );
    let before = std::fs::metadata(&big).unwrap().len();
    let ran = run_memory_limited(
        dir.path(),
        &["fix", "--format", "json", "big.yaml"],
        Input::Null,
    );
    ran.sane();
    assert!(ran.stderr.contains("larger than 64 MiB"), "{}", ran.stderr);
    assert_eq!(std::fs::metadata(&big).unwrap().len(), before);
}

/// The same cap on standard input: `helm template … | golint-k8s lint -` of an endless or huge
/// stream must stop reading at the cap and say so. When all of standard input was read into
/// memory first, `yes | golint-k8s lint -` grew until the machine ran out; under a 1 GiB limit
/// the read aborted.
#[test]
#[cfg_attr(
    not(feature = "heavy-tests"),
    ignore = "heavy tier: --features heavy-tests"
)]
fn standard_input_over_the_cap_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    // The limit itself is no obstacle: a normal input runs fine under it.
    let ran = run_memory_limited(dir.path(), &["lint", "-"], Input::Bytes(FIXABLE.into()));
    assert_eq!(ran.sane().code, Some(1), "{}", ran.stderr);
    // 1.5 GB of YAML text, more than the cap of a stream (512 MiB), which fits under the limit
    // only if it is read without reserving room beyond the cap.
    let chunk = format!("{CLEAN}---\n").repeat(4096);
    let mut stream = Vec::with_capacity(1_500_000_000);
    while stream.len() < 1_500_000_000 {
        stream.extend_from_slice(chunk.as_bytes());
    }
    let ran = run_memory_limited(
        dir.path(),
        &["lint", "-", "--format", "concise"],
        Input::Bytes(stream),
    );
    ran.sane();
    assert!(
        ran.out().contains("above the 512 MiB limit"),
        "{}",
        ran.out()
    );
}

// ---------------------------------------------------------------------------------------------
// Bytes that are not YAML text.

/// NUL bytes and invalid UTF-8 in the middle of a file: in a manifest, GK000 at the line and
/// column of the bad byte; in a file with nothing of a manifest, a note that still locates it;
/// from `lint` and (untouched) from `fix`, for files and for standard input.
#[test]
fn bad_bytes_are_located_and_never_touched() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, Vec<u8>, &str, &str); 6] = [
        (
            "nul.yaml",
            b"apiVersion: v1\nkind: Pod\nmeta\0data: {}\n".to_vec(),
            "nul.yaml:3:5:",
            "NUL byte at byte offset 29",
        ),
        (
            "overlong.yaml",
            b"a: 1\nb: \xc0\xaf\n".to_vec(),
            "overlong.yaml:2:4:",
            "invalid UTF-8 at byte offset 8",
        ),
        (
            "surrogate.yaml",
            b"a: 1\n\nb: \xed\xa0\x80\n".to_vec(),
            "surrogate.yaml:3:4:",
            "invalid UTF-8 at byte offset 9",
        ),
        (
            "truncated.yaml",
            "a: é\nb: €".as_bytes()[..11].to_vec(),
            "truncated.yaml:2:4:",
            "invalid UTF-8 at byte offset 9",
        ),
        (
            "utf16.yaml",
            b"\xff\xfea\x00:\x00 \x001\x00\n\x00".to_vec(),
            // kubectl reads UTF-16, but its line reader leaves this one an odd byte at the end.
            "utf16.yaml:1:1:",
            "incomplete UTF-16 character",
        ),
        (
            "random.yaml",
            pseudo_random_bytes(1 << 16, 7),
            "random.yaml:",
            "GK000",
        ),
    ];
    for (name, bytes, at, message) in &cases {
        write(&dir.path().join(name), bytes);
        let ran = run(
            dir.path(),
            &["lint", "--format", "concise", name],
            Input::Null,
        );
        ran.sane();
        let text = String::from_utf8_lossy(bytes);
        if text.contains("apiVersion") && text.contains("kind") {
            // A broken manifest: GK000 where it breaks.
            assert_eq!(ran.code, Some(1), "{name}");
            let first = ran.out().lines().next().unwrap_or("").to_string();
            assert!(
                first.starts_with(at) && first.contains("GK000") && first.contains(message),
                "{name}: {first}"
            );
        } else {
            // Nothing of a manifest: skipped, with a note that still says where it breaks.
            assert_eq!(ran.code, Some(0), "{name}");
            assert!(!ran.out().contains("GK000"), "{name}: {}", ran.out());
            let place = at.strip_prefix(&format!("{name}:")).unwrap();
            let note = format!("note: {name}: not linted: ");
            let line = ran.stderr.lines().find(|l| l.starts_with(&note));
            let line = line.unwrap_or_else(|| panic!("{name}: {}", ran.stderr));
            assert!(line.contains(&format!("({place}")), "{name}: {line}");
            if message != &"GK000" {
                assert!(line.contains(message), "{name}: {line}");
            }
        }
        let ran = run(dir.path(), &["fix", name], Input::Null);
        ran.sane();
        assert_eq!(&std::fs::read(dir.path().join(name)).unwrap(), bytes);
        // `fix -` passes bytes it cannot read through unchanged.
        let ran = run(dir.path(), &["fix", "-"], Input::Bytes(bytes.clone()));
        ran.sane();
        assert_eq!(&ran.stdout, bytes, "{name} through fix -");
    }
}

/// A deterministic xorshift stream: binary data with NULs and invalid UTF-8 at fixed places.
fn pseudo_random_bytes(n: usize, mut seed: u64) -> Vec<u8> {
    (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 24) as u8
        })
        .collect()
}

/// A UTF-8 byte order mark: linted normally, positions unshifted, and `fix` keeps it (with CRLF
/// too). A BOM in front of a later document is not a position shift either.
#[test]
fn byte_order_mark_is_kept_and_positions_are_right() {
    let dir = tempfile::tempdir().unwrap();
    let lf = format!("\u{feff}{FIXABLE}");
    let crlf = lf.replace('\n', "\r\n");
    write(&dir.path().join("bom.yaml"), &lf);
    write(&dir.path().join("bom-crlf.yaml"), &crlf);
    write(&dir.path().join("plain.yaml"), FIXABLE);
    let ran = run(dir.path(), &["lint", "--format", "json", "."], Input::Null);
    let v = ran.json();
    let at = |file: &str| {
        let mut p: Vec<(String, u64, u64)> = findings(&v)
            .iter()
            .filter(|f| f["file"] == file)
            .map(|f| {
                let n = |k: &str| f[k].as_u64().unwrap();
                (
                    f["code"].as_str().unwrap().to_string(),
                    n("line"),
                    n("column"),
                )
            })
            .collect();
        p.sort();
        p
    };
    assert_eq!(at("plain.yaml").len(), 2, "{v}");
    assert_eq!(at("bom.yaml"), at("plain.yaml"));
    assert_eq!(at("bom-crlf.yaml"), at("plain.yaml"));
    let ran = run(dir.path(), &["fix", "--format", "json", "."], Input::Null);
    assert_eq!(ran.sane().code, Some(0), "{}", ran.stderr);
    for (name, original) in [("bom.yaml", &lf), ("bom-crlf.yaml", &crlf)] {
        let fixed = std::fs::read_to_string(dir.path().join(name)).unwrap();
        assert!(fixed.starts_with('\u{feff}'), "{name} lost its BOM");
        assert_eq!(fixed.matches('\u{feff}').count(), 1);
        assert!(fixed.contains("GOMEMLIMIT"), "{name}");
        if original.contains("\r\n") {
            assert_eq!(fixed.matches('\n').count(), fixed.matches("\r\n").count());
        }
    }
    let ran = run(dir.path(), &["fix", "--check", "."], Input::Null);
    assert_eq!(ran.sane().code, Some(0));
    // A BOM in front of the second document.
    let two = format!("{CLEAN}---\n\u{feff}{FIXABLE}");
    let ran = run(
        dir.path(),
        &["lint", "-", "--format", "json"],
        Input::Bytes(two.clone().into()),
    );
    ran.sane();
    let ran = run(dir.path(), &["fix", "-"], Input::Bytes(two.into()));
    ran.sane();
}

// ---------------------------------------------------------------------------------------------
// The file system: links, unreadable files, many files.

/// Symbolic-link loops: a directory that links to itself or its parent is walked once, without
/// following the links; a link to itself named on the command line is exit 2 with its name.
#[cfg(unix)]
#[test]
fn symlink_loops_in_a_walked_tree() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    write(&tree.join("sub/a.yaml"), FIXABLE);
    symlink(".", tree.join("sub/self")).unwrap();
    symlink("..", tree.join("sub/parent")).unwrap();
    symlink("self.yaml", tree.join("self.yaml")).unwrap();
    symlink("sub", tree.join("sub-link")).unwrap();
    let ran = run(
        dir.path(),
        &["lint", "--format", "json", "tree"],
        Input::Null,
    );
    ran.sane();
    let v = ran.json();
    assert_eq!(v["summary"]["files"], 1, "{v}");
    let ran = run(
        dir.path(),
        &[
            "lint",
            "--format",
            "concise",
            "tree/self.yaml",
            "tree/sub/a.yaml",
        ],
        Input::Null,
    );
    ran.sane();
    assert_eq!(ran.code, Some(2));
    assert!(ran.stderr.contains("tree/self.yaml"), "{}", ran.stderr);
    assert!(ran.out().contains("tree/sub/a.yaml:"), "{}", ran.out());
    // Through the loop by name: the same file, found.
    let ran = run(
        dir.path(),
        &["fix", "tree/sub/self/self/parent/sub/a.yaml"],
        Input::Null,
    );
    assert_eq!(ran.sane().code, Some(0), "{}", ran.stderr);
    assert!(std::fs::read_to_string(tree.join("sub/a.yaml"))
        .unwrap()
        .contains("GOMEMLIMIT"));
}

/// A file whose read fails even for root: `/proc/self/mem` opens, and reading its first page
/// fails with EIO. Named directly, it is exit 2 with its name. (Named through a `.yaml` link in
/// the tree, the link leads out of the named paths and is not read at all.)
#[cfg(target_os = "linux")]
#[test]
fn file_that_fails_to_read_is_exit_2_with_its_name() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("ok.yaml"), FIXABLE);
    for cmd in ["lint", "fix"] {
        let ran = run(dir.path(), &[cmd, "/proc/self/mem", "ok.yaml"], Input::Null);
        ran.sane();
        assert_eq!(ran.code, Some(2), "{cmd}: {}", ran.stderr);
        assert!(
            ran.stderr
                .lines()
                .any(|l| l.starts_with("error: /proc/self/mem:")),
            "{cmd}: {}",
            ran.stderr
        );
    }
    assert!(std::fs::read_to_string(dir.path().join("ok.yaml"))
        .unwrap()
        .contains("GOMEMLIMIT"));
}

/// Unreadable files and directories. As root nothing is unreadable by mode (tests/cli.rs skips
/// its check then), so the binary runs as `nobody` (uid 65534) instead, which mode 000 does stop.
#[cfg(unix)]
#[test]
fn unreadable_file_and_directory_are_exit_2_with_their_names() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    write(&p.join("tree/secret.yaml"), FIXABLE);
    write(&p.join("tree/locked/inner.yaml"), FIXABLE);
    write(&p.join("tree/ok.yaml"), FIXABLE);
    let mode = |path: &Path, m: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(m)).unwrap()
    };
    // `nobody` must reach the tree and write the file it may fix.
    mode(p, 0o755);
    mode(&p.join("tree"), 0o777);
    mode(&p.join("tree/secret.yaml"), 0o000);
    mode(&p.join("tree/locked"), 0o000);
    let as_nobody = is_root();
    if as_nobody {
        // The fixer refuses to hand a file to a new owner, so `nobody` may fix only its own.
        std::os::unix::fs::chown(p.join("tree/ok.yaml"), Some(65534), Some(65534)).unwrap();
    }
    if as_nobody && !runs_as_nobody() {
        println!("unreadable-file check not run: root, and `nobody` cannot run the test binary");
        return;
    }
    for args in [
        &["lint", "--format", "concise", "tree"][..],
        &["fix", "tree"][..],
    ] {
        let mut cmd = Command::new(bin());
        cmd.current_dir(p).args(all_go(args));
        if as_nobody {
            cmd.uid(65534).gid(65534);
        }
        let ran = run_cmd(cmd, Input::Null, LIMIT);
        ran.sane();
        assert_eq!(ran.code, Some(2), "{args:?}: {}", ran.stderr);
        let err = &ran.stderr;
        assert!(
            err.contains("tree/secret.yaml: permission denied"),
            "{args:?}: {err}"
        );
        assert!(err.contains("tree/locked"), "{args:?}: {err}");
    }
    assert!(std::fs::read_to_string(p.join("tree/ok.yaml"))
        .unwrap()
        .contains("GOMEMLIMIT"));
    mode(&p.join("tree/locked"), 0o755);
    assert_eq!(
        std::fs::read_to_string(p.join("tree/locked/inner.yaml")).unwrap(),
        FIXABLE
    );
}

/// Whether uid 65534 can execute the binary (every directory above it must be searchable).
#[cfg(unix)]
fn runs_as_nobody() -> bool {
    use std::os::unix::process::CommandExt;
    Command::new(bin())
        .arg("--version")
        .uid(65534)
        .gid(65534)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// 100,000 small files in 100 directories: every one is linted (the summary counts them all), and
/// the ten with a finding are reported.
#[test]
#[cfg_attr(
    not(feature = "heavy-tests"),
    ignore = "heavy tier: --features heavy-tests"
)]
fn hundred_thousand_files_are_all_linted() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    let started = Instant::now();
    for d in 0..100 {
        let sub = tree.join(format!("d{d:02}"));
        std::fs::create_dir_all(&sub).unwrap();
        for f in 0..1000 {
            let text = if f == 500 && d % 10 == 0 {
                FIXABLE
            } else {
                CLEAN
            };
            std::fs::write(sub.join(format!("f{f:03}.yaml")), text).unwrap();
        }
    }
    let created = started.elapsed();
    let ran = run(
        dir.path(),
        &["lint", "--format", "json", "tree"],
        Input::Null,
    );
    ran.sane();
    let v = ran.json();
    assert_eq!(v["summary"]["files"], 100_000, "{}", v["summary"]);
    let with_findings: std::collections::BTreeSet<&str> = findings(&v)
        .iter()
        .map(|f| f["file"].as_str().unwrap())
        .collect();
    assert_eq!(with_findings.len(), 10, "{with_findings:?}");
    println!(
        "100,000 files: created in {created:?}, linted in {:?}",
        ran.took
    );
}

// ---------------------------------------------------------------------------------------------
// Standard streams.

/// Standard input that is empty or closed before anything is written: a clean result, for
/// `lint -` and `fix -` (which then prints nothing).
#[test]
fn standard_input_closed_at_once_is_a_clean_result() {
    let dir = tempfile::tempdir().unwrap();
    for input in [|| Input::Null, || Input::Closed] {
        let ran = run(dir.path(), &["lint", "-"], input());
        assert_eq!(ran.sane().code, Some(0), "{}", ran.stderr);
        assert_eq!(ran.out(), "no problems found in 1 file\n");
        let ran = run(dir.path(), &["lint", "-", "--format", "json"], input());
        assert_eq!(ran.sane().code, Some(0));
        assert_eq!(ran.json()["summary"]["files"], 1);
        let ran = run(dir.path(), &["fix", "-"], input());
        assert_eq!(ran.sane().code, Some(0), "{}", ran.stderr);
        assert_eq!(ran.stdout, b"");
    }
}

/// Many files with findings, for output large enough to outlast a pipe's buffer.
fn many_findings(dir: &Path) {
    for i in 0..300 {
        write(&dir.join(format!("tree/f{i:03}.yaml")), FIXABLE);
    }
}

/// `golint-k8s <args> | head -1` under bash (`2>&1 | head -1` when `stderr_too`): the binary's
/// own exit code (from PIPESTATUS: a panic is 101, a signal 128 + its number), the line head
/// printed, and what went to standard error when it had a file of its own.
fn piped_into_head(dir: &Path, args: &[&str], stderr_too: bool) -> (Option<i32>, String, String) {
    let scratch = tempfile::tempdir().unwrap();
    let head = scratch.path().join("head.txt");
    let err = scratch.path().join("stderr.txt");
    let redirect = if stderr_too { "2>&1" } else { "2>\"$GK_ERR\"" };
    let script =
        format!("\"$0\" \"$@\" {redirect} | head -1 >\"$GK_HEAD\"; exit ${{PIPESTATUS[0]}}");
    let mut cmd = Command::new("bash");
    cmd.current_dir(dir)
        .arg("-c")
        .arg(script)
        .arg(bin())
        .args(all_go(args))
        .env("GK_HEAD", &head)
        .env("GK_ERR", &err);
    let ran = run_cmd(cmd, Input::Null, LIMIT);
    let line = std::fs::read_to_string(&head).unwrap_or_default();
    assert!(!line.is_empty(), "{args:?} printed nothing: {}", ran.stderr);
    (
        ran.code,
        line,
        std::fs::read_to_string(&err).unwrap_or_default(),
    )
}

/// `golint-k8s … | head -1` in every output format and command: no panic, exit 0, 1 or 2.
#[test]
fn closed_standard_output_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    many_findings(dir.path());
    let runs: [&[&str]; 8] = [
        &["lint", "tree"],
        &["lint", "tree", "--format", "concise"],
        &["lint", "tree", "--format", "json"],
        &["lint", "tree", "--format", "sarif"],
        &["lint", "tree", "--format", "github"],
        &["fix", "tree", "--diff"],
        &["fix", "tree", "--check"],
        &["fix", "tree", "--check", "--format", "json"],
    ];
    for args in runs {
        let (code, _, err) = piped_into_head(dir.path(), args, false);
        assert!(
            matches!(code, Some(0..=2)) && !err.contains("panicked"),
            "{args:?}: exit {code:?}: {err}"
        );
    }
}

/// `golint-k8s fix --diff . 2>&1 | head -1`: the summary line goes to standard error after the
/// pipe has closed. `eprintln!` panicked on that write error, and as the panic message could not
/// be printed either, the only sign was exit code 101.
#[test]
fn closed_standard_error_is_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    many_findings(dir.path());
    let runs: [&[&str]; 4] = [
        &["lint", "tree"],
        &["fix", "tree", "--diff"],
        &["fix", "tree", "--check"],
        &["lint", "tree", "--format", "json", "--statistics"],
    ];
    let mut failed = Vec::new();
    for args in runs {
        let (code, _, _) = piped_into_head(dir.path(), args, true);
        if !matches!(code, Some(0..=2)) {
            failed.push(format!("{args:?} 2>&1 | head -1: exit {code:?}"));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// `fix` failure safety.

/// Variants of a fixable manifest, so that the tree holds several styles of edit: block and flow
/// style, CRLF, 4-space indentation, an existing env list with an unquoted number (GK302).
fn fixable_variant(i: usize) -> String {
    let base = FIXABLE.replace("name: api\nspec", &format!("name: api-{i}\nspec"));
    match i % 4 {
        0 => base,
        1 => base.replace('\n', "\r\n"),
        2 => base.replace(
            "          resources:\n",
            "          env: [{name: GOGC, value: 200}]\n          resources:\n",
        ),
        _ => FIXABLE_4SPACE.replace("name: api\nspec", &format!("name: api-{i}\nspec")),
    }
}

/// FIXABLE indented by four spaces, sequence items flush with their key.
const FIXABLE_4SPACE: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
    name: api
spec:
    template:
        spec:
            containers:
            -   name: api
                image: ghcr.io/acme/api:1.0
                resources:
                    requests: {cpu: "1", memory: 512Mi}
                    limits: {cpu: "2", memory: 512Mi}
"#;

/// A tree of `n` fixable files, some read-only (mode 0444) and, as root, some owned by 4242:4242.
/// Returns the relative names with their original bytes.
#[cfg(unix)]
fn fixable_tree(root: &Path, n: usize) -> Vec<(String, Vec<u8>)> {
    use std::os::unix::fs::PermissionsExt;
    let mut files = Vec::with_capacity(n);
    for i in 0..n {
        let name = format!("d{}/f{i:04}.yaml", i % 10);
        let text = fixable_variant(i);
        let path = root.join(&name);
        write(&path, &text);
        if i % 500 == 7 {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
        } else if i % 500 == 8 && is_root() {
            std::os::unix::fs::chown(&path, Some(4242), Some(4242)).unwrap();
        }
        files.push((name, text.into_bytes()));
    }
    files
}

#[cfg(unix)]
fn read_only(i: usize) -> bool {
    i % 500 == 7
}

/// `fix` SIGKILLed at varied moments over 3,000 files: every file is then byte for byte either
/// its original or its fully fixed version, never a mix or a truncation. A temporary file may be
/// left behind by the kill; it never has a manifest's extension. A later complete run fixes the
/// rest, reports the read-only files and leaves them alone, and keeps modes and owners.
#[cfg(unix)]
#[test]
#[cfg_attr(
    not(feature = "heavy-tests"),
    ignore = "heavy tier: --features heavy-tests"
)]
fn killed_fix_leaves_every_file_whole() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    const FILES: usize = 3000;
    let base = tempfile::tempdir().unwrap();

    // The fully fixed version of each file, from a run on a copy.
    let reference = base.path().join("reference");
    let files = fixable_tree(&reference, FILES);
    let ran = run(base.path(), &["fix", "reference", "--quiet"], Input::Null);
    ran.sane();
    let full_run = ran.took;
    let fixed: Vec<Vec<u8>> = files
        .iter()
        .enumerate()
        .map(|(i, (name, original))| {
            let bytes = std::fs::read(reference.join(name)).unwrap();
            assert_eq!(read_only(i), &bytes == original, "{name}");
            bytes
        })
        .collect();

    // Kill points spread over the run's length, from before the first write to near its end.
    // (A run alone may be faster than the reference run, which shared the machine with other
    // tests, so the later points are not near the end.)
    let fractions = [0.02, 0.08, 0.15, 0.25, 0.35, 0.5];
    let mut report = Vec::new();
    let mut progress = Vec::new();
    for (k, fraction) in fractions.iter().enumerate() {
        let tree = base.path().join(format!("run{k}"));
        fixable_tree(&tree, FILES);
        let delay = full_run.mul_f64(*fraction);
        let mut child = Command::new(bin())
            .current_dir(base.path())
            .args(["fix", &format!("run{k}"), "--quiet", "--assume-go"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        child.kill().unwrap(); // SIGKILL
        let status = child.wait().unwrap();
        let mut done = 0;
        for (i, (name, original)) in files.iter().enumerate() {
            let now = std::fs::read(tree.join(name)).unwrap();
            if now == fixed[i] && now != *original {
                done += 1;
            } else {
                assert_eq!(
                    &now, original,
                    "{name} after a kill at {delay:?} is neither the original nor the fixed text"
                );
            }
        }
        let temps = stray_files(&tree);
        assert!(
            temps
                .iter()
                .all(|t| !t.ends_with(".yaml") && !t.ends_with(".yml")),
            "{temps:?}"
        );
        progress.push(done);
        report.push(format!(
            "killed at {delay:?} ({status}): {done} of {FILES} files fixed, {} temporary files left",
            temps.len()
        ));
        if k + 1 < fractions.len() {
            std::fs::remove_dir_all(&tree).unwrap();
            continue;
        }
        // The last tree is finished by a complete run.
        let ran = run(
            base.path(),
            &["fix", &format!("run{k}"), "--quiet"],
            Input::Null,
        );
        ran.sane();
        assert_eq!(
            ran.code,
            Some(2),
            "read-only files are errors: {}",
            ran.stderr
        );
        for (i, (name, original)) in files.iter().enumerate() {
            let path = tree.join(name);
            let now = std::fs::read(&path).unwrap();
            let meta = std::fs::metadata(&path).unwrap();
            if read_only(i) {
                assert_eq!(&now, original, "{name} is read-only");
                assert_eq!(meta.permissions().mode() & 0o777, 0o444, "{name}");
                assert!(
                    ran.stderr.contains(&format!("{name}: not fixed"))
                        && ran.stderr.contains("read-only"),
                    "{name} not reported: {}",
                    ran.stderr
                );
            } else {
                assert_eq!(now, fixed[i], "{name}");
            }
            if i % 500 == 8 && is_root() {
                assert_eq!(
                    (meta.uid(), meta.gid()),
                    (4242, 4242),
                    "{name} lost its owner"
                );
            }
        }
    }
    println!(
        "full fix of {FILES} files: {full_run:?}\n{}",
        report.join("\n")
    );
    // At least one kill must have landed while files were being written, or the test proved
    // nothing about partial runs.
    let fixable = (0..FILES).filter(|&i| !read_only(i)).count();
    assert!(
        progress.iter().any(|&d| 0 < d && d < fixable),
        "no kill landed while files were being written:\n{}",
        report.join("\n")
    );
}

/// Files in `dir` (recursively) that are not the tree's own `.yaml` files: temporary files.
fn stray_files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            out.extend(stray_files(&entry.path()));
        } else {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with(".golint-k8s-") || !name.starts_with('f') {
                out.push(name);
            }
        }
    }
    out
}

/// The writer's temporary files left in `dir`: there must never be any.
fn writer_temporaries(dir: &Path) -> Vec<std::ffi::OsString> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with(".golint-k8s-"))
        .collect()
}

/// The writer itself: a file that changed on disk since it was read is refused and left as it is
/// now, and so is a read-only one; a file owned by someone else keeps its owner and mode.
#[cfg(unix)]
#[test]
fn write_atomic_refuses_stale_and_read_only_files() {
    use golint_k8s::fix::write::{write_atomic, WriteError};
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.yaml");

    write(&path, "edited by someone else\n");
    let err = write_atomic(&path, b"what fix read\n", "fixed\n").unwrap_err();
    assert!(matches!(err, WriteError::Changed), "{err}");
    assert!(err.to_string().contains("changed on disk"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), b"edited by someone else\n");
    // A file that grew or shrank by a byte, or only gained a BOM, is just as stale.
    for now in [
        "what fix read\n\n",
        "what fix read",
        "\u{feff}what fix read\n",
    ] {
        write(&path, now);
        assert!(write_atomic(&path, b"what fix read\n", "fixed\n").is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), now);
    }

    write(&path, "original\n");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    let err = write_atomic(&path, b"original\n", "fixed\n").unwrap_err();
    assert!(matches!(err, WriteError::ReadOnly), "{err}");
    assert!(err.to_string().contains("read-only"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), b"original\n");

    let gone = dir.path().join("gone.yaml");
    assert!(write_atomic(&gone, b"x", "y").is_err());
    assert!(!gone.exists());

    let owned = dir.path().join("owned.yaml");
    write(&owned, "original\n");
    std::fs::set_permissions(&owned, std::fs::Permissions::from_mode(0o640)).unwrap();
    if is_root() {
        std::os::unix::fs::chown(&owned, Some(4242), Some(4242)).unwrap();
    } else {
        println!("owner check not run: only root can give a file to uid 4242");
    }
    write_atomic(&owned, b"original\n", "fixed\n").unwrap();
    let meta = std::fs::metadata(&owned).unwrap();
    assert_eq!(std::fs::read(&owned).unwrap(), b"fixed\n");
    assert_eq!(meta.permissions().mode() & 0o7777, 0o640);
    if is_root() {
        assert_eq!((meta.uid(), meta.gid()), (4242, 4242));
    }
    let leftovers = writer_temporaries(dir.path());
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// An edit made while the fixed text is being flushed (the slow part of a write) is kept, and the
/// write reports the file as changed: the comparison with what was read is repeated after the
/// flush. Also an editor's save that renames a new file over the original, even with the same
/// text.
#[cfg(unix)]
#[test]
fn an_edit_during_the_flush_is_not_overwritten() {
    use golint_k8s::fix::write::{write_atomic_observed, WriteError};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.yaml");
    write(&path, "original\n");
    let err = write_atomic_observed(&path, b"original\n", "fixed\n", |p| {
        let mut f = std::fs::OpenOptions::new().append(true).open(p).unwrap();
        std::io::Write::write_all(&mut f, b"# edit\n").unwrap();
    })
    .unwrap_err();
    assert!(matches!(err, WriteError::Changed), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), b"original\n# edit\n");

    write(&path, "original\n");
    let err = write_atomic_observed(&path, b"original\n", "fixed\n", |p| {
        let saved = p.with_extension("saving");
        std::fs::write(&saved, "original\n").unwrap();
        std::fs::rename(&saved, p).unwrap();
    })
    .unwrap_err();
    assert!(matches!(err, WriteError::Changed), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), b"original\n");

    // Nothing happening in the window: written as before, no temporary file left.
    write(&path, "original\n");
    write_atomic_observed(&path, b"original\n", "fixed\n", |_| {}).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), b"fixed\n");
    let leftovers = writer_temporaries(dir.path());
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Two `fix` runs on the same tree at once: each file ends up valid and fully fixed exactly once
/// (no env entry added twice, which would be GK303, and nothing unparseable, GK000), and a
/// following `fix --check` finds nothing to do. A run that loses a race for a file reports it as
/// changed on disk, which is exit 2 and the only error allowed.
#[cfg(unix)]
#[test]
#[cfg_attr(
    not(feature = "heavy-tests"),
    ignore = "heavy tier: --features heavy-tests"
)]
fn concurrent_fix_runs_do_not_duplicate_fixes() {
    const FILES: usize = 1500;
    let base = tempfile::tempdir().unwrap();
    let reference = base.path().join("reference");
    let files: Vec<(String, Vec<u8>)> = (0..FILES)
        .map(|i| {
            let name = format!("d{}/f{i:04}.yaml", i % 10);
            let text = fixable_variant(i);
            write(&reference.join(&name), &text);
            (name, text.into_bytes())
        })
        .collect();
    run(base.path(), &["fix", "reference", "--quiet"], Input::Null).sane();
    let mut races = Vec::new();
    for round in 0..3 {
        let tree = base.path().join(format!("tree{round}"));
        for (name, text) in &files {
            write(&tree.join(name), text);
        }
        let spawn = || {
            let mut cmd = Command::new(bin());
            cmd.current_dir(base.path())
                .args(["fix", &format!("tree{round}"), "--quiet", "--assume-go"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let started = Instant::now();
            let mut child = cmd.spawn().unwrap();
            let streams = drain(&mut child);
            (child, started, streams)
        };
        let (mut a, a_started, a_out) = spawn();
        let (mut b, b_started, b_out) = spawn();
        let exits = [
            wait_limited(&mut a, a_started, LIMIT, "first fix"),
            wait_limited(&mut b, b_started, LIMIT, "second fix"),
        ];
        let errs = [a_out.1.join().unwrap(), b_out.1.join().unwrap()];
        let mut lost = 0;
        for (code, err) in exits.iter().zip(&errs) {
            let err = String::from_utf8_lossy(err);
            assert!(matches!(code, Some(0 | 2)), "exit {code:?}: {err}");
            for line in err.lines().filter(|l| l.starts_with("error:")) {
                assert!(line.contains("changed on disk"), "{line}");
                lost += 1;
            }
        }
        races.push(format!(
            "round {round}: exits {exits:?}, {lost} files lost a race"
        ));
        for (name, _) in &files {
            assert_eq!(
                std::fs::read(tree.join(name)).unwrap(),
                std::fs::read(reference.join(name)).unwrap(),
                "{name} differs from a single run's result"
            );
        }
        let ran = run(
            base.path(),
            &["lint", &format!("tree{round}"), "--format", "json"],
            Input::Null,
        );
        ran.sane();
        let found = codes(&ran.json());
        for bad in ["GK000", "GK001", "GK303"] {
            assert!(
                !found.iter().any(|c| c == bad),
                "{bad} after concurrent fixes"
            );
        }
        let ran = run(
            base.path(),
            &["fix", "--check", &format!("tree{round}")],
            Input::Null,
        );
        assert_eq!(ran.sane().code, Some(0), "{}", ran.stderr);
    }
    println!("{}", races.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// Found by attacking fix, the CLI and the language server (each failed before its fix).

/// One-line JSON whose findings lie past column 65,535: the human output (lint, and fix after
/// writing) shows an excerpt of the line around each finding instead of crashing the renderer.
#[test]
fn findings_past_column_65535_are_shown_as_an_excerpt() {
    let dir = tempfile::tempdir().unwrap();
    let pad = "x".repeat(70_000);
    let json = format!(
        "{{\"apiVersion\": \"apps/v1\", \"kind\": \"Deployment\", \"metadata\": {{\"name\": \"a\", \"annotations\": {{\"p\": \"{pad}\"}}}}, \"spec\": {{\"template\": {{\"spec\": {{\"containers\": [{{\"name\": \"app\", \"image\": \"golang:1.22\", \"resources\": {{\"limits\": {{\"memory\": \"512Mi\", \"cpu\": \"2\"}}}}}}]}}}}}}}}"
    );
    write(&dir.path().join("wide.json"), &json);
    let ran = run(dir.path(), &["lint", "wide.json"], Input::Null);
    assert_eq!(ran.sane().code, Some(1), "{}", ran.stderr);
    let out = ran.out();
    assert!(out.contains("memory-limit-without-gomemlimit"), "{out}");
    assert!(out.contains("wide.json:1:"), "{out}");
    // The excerpt, not the 70,000 bytes before it.
    assert!(out.len() < 20_000, "{} bytes of output", out.len());
    assert!(out.contains("\"memory\": \"512Mi\""), "{out}");
    let ran = run(dir.path(), &["fix", "wide.json"], Input::Null);
    ran.sane();
    assert!(
        ran.out().contains("fixed") || ran.stderr.contains("fixed"),
        "{}",
        ran.stderr
    );
    let fixed = std::fs::read_to_string(dir.path().join("wide.json")).unwrap();
    assert!(fixed.contains("GOMEMLIMIT") && fixed.contains(&pad));
}

/// A named pipe on the command line: read when something writes to it (`<(helm template …)`),
/// refused at once with its name when nothing does, never waited on; and never replaced by `fix`.
#[cfg(unix)]
#[test]
fn a_named_pipe_is_read_or_refused_never_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.yaml");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    write(&dir.path().join("ok.yaml"), FIXABLE);

    let ran = run(dir.path(), &["lint", "pipe.yaml", "ok.yaml"], Input::Null);
    assert_eq!(ran.sane().code, Some(2), "{}", ran.stderr);
    assert!(
        ran.stderr
            .contains("pipe.yaml: a named pipe that nothing writes to"),
        "{}",
        ran.stderr
    );
    assert!(ran.out().contains("ok.yaml"), "the other file is linted");

    // With a writer, it is read to its end like any pipe.
    let for_writer = fifo.clone();
    let writer = std::thread::spawn(move || {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(for_writer)
            .unwrap();
        f.write_all(FIXABLE.as_bytes()).unwrap();
    });
    let ran = run(dir.path(), &["fix", "pipe.yaml"], Input::Null);
    writer.join().unwrap();
    assert_eq!(ran.sane().code, Some(2), "{}", ran.stderr);
    assert!(
        ran.stderr
            .contains("pipe.yaml: not fixed: not a regular file"),
        "{}",
        ran.stderr
    );
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
}

/// A named pipe among the inputs of `--inspect-images`: its bytes are read once and linted, not
/// read a second time after the images are listed (when nothing writes to the pipe any more);
/// both when each image is looked up as its container is linted and when the images are listed
/// first (here to warm the cache).
#[cfg(unix)]
#[test]
fn a_named_pipe_is_read_once_when_images_are_inspected() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.yaml");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    write(&dir.path().join("ok.yaml"), CLEAN);
    for warm in [false, true] {
        let for_writer = fifo.clone();
        let writer = std::thread::spawn(move || {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(for_writer)
                .unwrap();
            f.write_all(FIXABLE.as_bytes()).unwrap();
        });
        let mut args = vec!["lint", "--inspect-images", "--offline", "--format", "json"];
        if warm {
            args.push("--warm-image-cache");
        }
        args.extend(["pipe.yaml", "ok.yaml"]);
        let mut cmd = Command::new(bin());
        cmd.current_dir(dir.path())
            .env("GOLINT_K8S_CACHE", dir.path().join("cache"))
            .args(all_go(&args));
        let ran = run_cmd(cmd, Input::Null, LIMIT);
        writer.join().unwrap();
        assert_eq!(ran.sane().code, Some(1), "warm {warm}: {}", ran.stderr);
        let v = ran.json();
        assert_eq!(v["errors"], serde_json::json!([]), "warm {warm}");
        assert_eq!(v["summary"]["files"], 2, "warm {warm}");
        let pipe_codes: Vec<&str> = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["file"] == "pipe.yaml")
            .filter_map(|f| f["code"].as_str())
            .collect();
        assert!(pipe_codes.contains(&"GK201"), "warm {warm}: {pipe_codes:?}");
        let note = "note: image ghcr.io/acme/api:1.0 was not inspected: --offline, and the \
                    image's digest is not in the cache";
        assert_eq!(ran.stderr.contains(note), !warm, "{}", ran.stderr);
    }
}

/// `fix` ended by SIGINT or SIGTERM while it writes a file: the file is as it was, no temporary
/// file is left beside it, and the exit status is the signal's (128 + its number). Temporary files
/// that a killed run left (older than any write takes) are removed by the next run that writes
/// into their directory, and it says so.
#[cfg(unix)]
#[test]
#[cfg_attr(
    not(feature = "heavy-tests"),
    ignore = "heavy tier: --features heavy-tests"
)]
fn an_interrupted_fix_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.yaml");
    // Big enough that writing and flushing the fixed copy takes long enough to be caught.
    let filler: String = (0..400_000)
        .map(|i| format!("    k{i}: \"{}\"\n", "v".repeat(60)))
        .collect();
    let original = FIXABLE.replace(
        "metadata:\n  name: api\n",
        &format!("metadata:\n  name: api\n  annotations:\n{filler}"),
    );
    let temporaries = |dir: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with(".golint-k8s-")
            })
            .collect()
    };
    let mut caught = 0;
    // SIGUSR1 and SIGALRM end a process by default as SIGTERM does (a CI runner's timeout, a
    // stray `kill -USR1`), and must clean up as well.
    for (signal, number) in [
        (libc::SIGTERM, 15),
        (libc::SIGINT, 2),
        (libc::SIGUSR1, 10),
        (libc::SIGALRM, 14),
        (libc::SIGTERM, 15),
    ] {
        write(&path, &original);
        let mut child = Command::new(bin())
            .current_dir(dir.path())
            .args(["fix", "big.yaml", "--assume-go"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        let mut signalled = false;
        while started.elapsed() < LIMIT {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            if !temporaries(dir.path()).is_empty() {
                // SAFETY: a signal to our own child, which has not been waited for.
                unsafe { libc::kill(child.id() as i32, signal) };
                signalled = true;
                break;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        let status = child.wait().unwrap();
        assert!(
            temporaries(dir.path()).is_empty(),
            "{:?}",
            temporaries(dir.path())
        );
        let now = std::fs::read_to_string(&path).unwrap();
        if signalled {
            use std::os::unix::process::ExitStatusExt;
            // Ended by our handler (128 + n), or by the signal itself if it came after the
            // rename, when the handler had nothing left to do but the default would end it too.
            assert!(
                status.code() == Some(128 + number) || status.signal() == Some(signal),
                "{status:?}"
            );
            assert!(now == original || now.contains("GOMEMLIMIT"), "a torn file");
            caught += 1;
        }
    }
    assert!(
        caught > 0,
        "fix finished before its temporary file was seen, every time"
    );

    // Left by a killed run an hour ago: removed. One a running fix could own: kept.
    let stale = dir.path().join(".golint-k8s-abc123.tmp");
    let fresh = dir.path().join(".golint-k8s-def456.tmp");
    write(&stale, "old copy");
    write(&fresh, "new copy");
    let hour_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&stale)
        .unwrap()
        .set_modified(hour_ago)
        .unwrap();
    write(&path, FIXABLE);
    let ran = run(dir.path(), &["fix", "big.yaml"], Input::Null);
    assert_eq!(ran.sane().code, Some(0), "{}", ran.stderr);
    assert!(!stale.exists() && fresh.exists());
    assert!(
        ran.stderr
            .contains("removed 1 temporary file (.golint-k8s-*.tmp)"),
        "{}",
        ran.stderr
    );
}

/// A file size limit (`ulimit -f`, common in CI sandboxes) below the fixed file's size: the
/// write fails for that file with an error that names the limit, instead of SIGXFSZ ending the
/// process half-way; the file is as it was, no temporary file is left, other files are fixed.
#[cfg(unix)]
#[test]
fn fix_under_a_file_size_limit_leaves_the_file_whole() {
    let dir = tempfile::tempdir().unwrap();
    let filler: String = (0..2_000)
        .map(|i| format!("    k{i}: \"{}\"\n", "v".repeat(60)))
        .collect();
    let big = FIXABLE.replace(
        "metadata:\n  name: api\n",
        &format!("metadata:\n  name: api\n  annotations:\n{filler}"),
    );
    write(&dir.path().join("big.yaml"), &big);
    write(&dir.path().join("small.yaml"), FIXABLE);
    let mut cmd = Command::new("sh");
    // 64 blocks of 512 bytes: room for the small file, not for the big one (150 kB).
    cmd.current_dir(dir.path())
        .args([
            "-c",
            "ulimit -f 64; exec \"$0\" fix big.yaml small.yaml --assume-go",
        ])
        .arg(bin());
    let ran = run_cmd(cmd, Input::Null, LIMIT);
    assert_eq!(ran.code, Some(2), "{:?} {}", ran.code, ran.stderr);
    assert!(
        ran.stderr.contains(
            "big.yaml: not fixed: the fixed file would be larger than the file size limit"
        ),
        "{}",
        ran.stderr
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("big.yaml")).unwrap(),
        big
    );
    assert!(std::fs::read_to_string(dir.path().join("small.yaml"))
        .unwrap()
        .contains("GOMEMLIMIT"));
    assert!(writer_temporaries(dir.path()).is_empty());
}

/// `fix` replaces a file by renaming a new one over it: the new file takes the old one's
/// extended attributes (a `user.*` attribute, a POSIX ACL, which Linux keeps as the attribute
/// `system.posix_acl_access`), as well as its mode.
#[cfg(target_os = "linux")]
#[test]
fn fix_keeps_extended_attributes_and_acls() {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.yaml");
    write(&path, FIXABLE);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    let cpath = CString::new(path.as_os_str().as_bytes()).unwrap();
    let set = |name: &str, value: &[u8]| -> i32 {
        let name = CString::new(name).unwrap();
        // SAFETY: NUL-terminated strings and a readable buffer of the given length.
        unsafe {
            libc::setxattr(
                cpath.as_ptr(),
                name.as_ptr(),
                value.as_ptr().cast(),
                value.len(),
                0,
            )
        }
    };
    let get = |name: &str| -> Option<Vec<u8>> {
        let name = CString::new(name).unwrap();
        let mut buf = vec![0u8; 4096];
        // SAFETY: as above, with a writable buffer.
        let n = unsafe {
            libc::getxattr(
                cpath.as_ptr(),
                name.as_ptr(),
                buf.as_mut_ptr().cast(),
                buf.len(),
            )
        };
        (n >= 0).then(|| buf[..n as usize].to_vec())
    };
    if set("user.test", b"kept") != 0 {
        let e = std::io::Error::last_os_error();
        // Only a file system without user attributes may skip this, and it says so.
        assert_eq!(e.raw_os_error(), Some(libc::ENOTSUP), "{e}");
        eprintln!("SKIPPED: the temporary directory's file system has no user attributes");
        return;
    }
    // An ACL granting user 4242 read, in the kernel's attribute form: a version, then
    // (tag, permissions, id) entries in tag order.
    let mut acl = 2u32.to_le_bytes().to_vec();
    for (tag, perm, id) in [
        (0x01u16, 6u16, u32::MAX),
        (0x02, 4, 4242),
        (0x04, 4, u32::MAX),
        (0x10, 4, u32::MAX),
        (0x20, 0, u32::MAX),
    ] {
        acl.extend(tag.to_le_bytes());
        acl.extend(perm.to_le_bytes());
        acl.extend(id.to_le_bytes());
    }
    let has_acl = set("system.posix_acl_access", &acl) == 0;
    let acl_before = get("system.posix_acl_access");
    let mode_before = std::fs::metadata(&path).unwrap().permissions().mode();
    let ran = run(dir.path(), &["fix", "a.yaml"], Input::Null);
    assert_eq!(ran.sane().code, Some(0), "{}", ran.stderr);
    assert!(std::fs::read_to_string(&path)
        .unwrap()
        .contains("GOMEMLIMIT"));
    assert_eq!(get("user.test").as_deref(), Some(&b"kept"[..]));
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode(),
        mode_before
    );
    if has_acl {
        assert!(acl_before.is_some());
        assert_eq!(get("system.posix_acl_access"), acl_before);
    } else {
        eprintln!("note: the file system keeps no POSIX ACLs; only the user attribute was checked");
    }
}

/// Symlinks in a walked tree: a link to a manifest is linted (once, when it leads to a file the
/// walk also found), and fixed through, staying a link; links to directories and links that lead
/// nowhere are passed over with a note each, never in silence. `c.yaml` leads out of the named
/// directory but stays in its git repository, which is where links may lead.
#[cfg(unix)]
#[test]
fn symlinked_manifests_are_linted_and_fixed_through() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    git_init(dir.path());
    let tree = dir.path().join("tree");
    write(&tree.join("a.yaml"), FIXABLE);
    write(&dir.path().join("shared/o.yaml"), FIXABLE);
    symlink("a.yaml", tree.join("b.yaml")).unwrap();
    symlink("../shared/o.yaml", tree.join("c.yaml")).unwrap();
    symlink("../shared", tree.join("shared-dir")).unwrap();
    symlink("gone.yaml", tree.join("broken.yaml")).unwrap();
    let ran = run(
        dir.path(),
        &["lint", "--format", "json", "tree"],
        Input::Null,
    );
    ran.sane();
    let v = ran.json();
    let files: std::collections::BTreeSet<&str> = findings(&v)
        .iter()
        .map(|f| f["file"].as_str().unwrap())
        .collect();
    assert_eq!(
        files.into_iter().collect::<Vec<_>>(),
        ["tree/a.yaml", "tree/c.yaml"],
        "{v}"
    );
    assert!(
        ran.stderr
            .contains("tree/shared-dir: a symlink to a directory; not followed"),
        "{}",
        ran.stderr
    );
    assert!(
        ran.stderr
            .contains("tree/broken.yaml: a symlink that leads to no file"),
        "{}",
        ran.stderr
    );
    let ran = run(dir.path(), &["fix", "tree"], Input::Null);
    ran.sane();
    assert!(std::fs::symlink_metadata(tree.join("c.yaml"))
        .unwrap()
        .file_type()
        .is_symlink());
    let shared = std::fs::read_to_string(dir.path().join("shared/o.yaml")).unwrap();
    assert!(shared.contains("GOMEMLIMIT"), "{}", ran.stderr);
}

fn git_init(dir: &Path) {
    let ok = Command::new("git")
        .args(["init", "-q"])
        .arg(dir)
        .stdout(Stdio::null())
        .status()
        .unwrap()
        .success();
    assert!(ok, "git init");
}

/// Not YAML, no manifest, and secret: what a link into a home directory finds.
const CREDENTIALS: &str =
    "[default]\naws_access_key_id = AKIASECRETKEYID\naws_secret_access_key = s3cr3t/VALUE\n";

/// A checked-out link that leads out of the named directory and its repository (to a
/// credentials file, to someone else's manifest) is neither read nor written, whether the walk
/// finds it or it is named: a note names the link, in every format nothing of the file is
/// printed, and `fix` leaves the file it leads to alone.
#[cfg(unix)]
#[test]
fn symlinks_out_of_the_tree_are_not_read_or_written() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    write(&home.join(".aws/credentials"), CREDENTIALS);
    write(&home.join("other/o.yaml"), FIXABLE);
    let repo = dir.path().join("repo");
    git_init(&repo);
    write(&repo.join("a.yaml"), FIXABLE);
    symlink("../home/.aws/credentials", repo.join("creds.yaml")).unwrap();
    // Through a chain of links: the last one decides.
    symlink("../home/other/o.yaml", repo.join("hop.yaml")).unwrap();
    symlink("hop.yaml", repo.join("other.yaml")).unwrap();
    for args in [
        &["lint", "--format", "human", "repo"][..],
        &["lint", "--format", "concise", "repo"],
        &["lint", "--format", "github", "repo"],
        &["lint", "--format", "sarif", "repo"],
        &[
            "lint",
            "--format",
            "human",
            "repo/creds.yaml",
            "repo/a.yaml",
        ],
        &["lint", "--format", "human", "repo/creds.yaml"],
    ] {
        let ran = run(dir.path(), args, Input::Null);
        ran.sane();
        let all = format!("{}{}", ran.out(), ran.stderr);
        assert!(
            !all.contains("SECRET") && !all.contains("s3cr3t"),
            "{args:?}: {all}"
        );
        assert!(
            ran.stderr.contains(
                "repo/creds.yaml: a symlink to a file outside the named paths and their git repository; not read"
            ),
            "{args:?}: {}",
            ran.stderr
        );
    }
    let ran = run(
        dir.path(),
        &["lint", "--format", "json", "repo"],
        Input::Null,
    );
    assert_eq!(ran.sane().code, Some(1), "{}", ran.stderr);
    let v = ran.json();
    let files: std::collections::BTreeSet<&str> = findings(&v)
        .iter()
        .map(|f| f["file"].as_str().unwrap())
        .collect();
    assert_eq!(
        files.into_iter().collect::<Vec<_>>(),
        ["repo/a.yaml"],
        "{v}"
    );
    let refused: Vec<&str> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        refused,
        ["repo/creds.yaml", "repo/hop.yaml", "repo/other.yaml"],
        "{v}"
    );
    let ran = run(dir.path(), &["fix", "repo"], Input::Null);
    ran.sane();
    assert_eq!(
        std::fs::read_to_string(home.join("other/o.yaml")).unwrap(),
        FIXABLE
    );
    assert_eq!(
        std::fs::read_to_string(home.join(".aws/credentials")).unwrap(),
        CREDENTIALS
    );
    assert!(std::fs::read_to_string(repo.join("a.yaml"))
        .unwrap()
        .contains("GOMEMLIMIT"));
    // Named as a file the link leads to, the file is linted.
    let ran = run(
        dir.path(),
        &["lint", "--format", "json", "home/other/o.yaml"],
        Input::Null,
    );
    assert_eq!(findings(&ran.json()).len(), 2, "{}", ran.stderr);
}

/// A file that does not parse may be anything: its finding shows the offending line and no line
/// around it, and a file that has nothing of a manifest (no `apiVersion`, no `kind`) is not
/// judged, so it shows no line at all.
#[test]
fn invalid_yaml_shows_only_its_offending_line() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: before-secret-line\n  label: a: b\n  other: after-secret-line\n";
    write(&dir.path().join("bad.yaml"), manifest);
    write(&dir.path().join("creds.yaml"), CREDENTIALS);
    let ran = run(
        dir.path(),
        &["lint", "--format", "human", "bad.yaml", "creds.yaml"],
        Input::Null,
    );
    assert_eq!(ran.sane().code, Some(1), "{}", ran.stderr);
    let out = ran.out();
    assert!(out.contains("GK000"), "{out}");
    assert!(out.contains("label: a: b"), "{out}");
    assert!(!out.contains("secret-line"), "{out}");
    assert!(!out.contains("SECRET") && !out.contains("s3cr3t"), "{out}");
    // The credentials file has nothing of a manifest: it is skipped with a note that names it,
    // and shows none of its lines either.
    let err = &ran.stderr;
    assert!(err.contains("note: creds.yaml: not linted"), "{err}");
    assert!(!err.contains("SECRET") && !err.contains("s3cr3t"), "{err}");
}

/// A file with two names (a hard link): replacing it would leave the other name with the old
/// text, so it is reported and left alone, and both names keep reading the same.
#[cfg(unix)]
#[test]
fn a_hard_linked_file_is_not_fixed_apart() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("a.yaml"), FIXABLE);
    std::fs::hard_link(dir.path().join("a.yaml"), dir.path().join("b.yml")).unwrap();
    let ran = run(dir.path(), &["fix", "a.yaml"], Input::Null);
    assert_eq!(ran.sane().code, Some(2), "{}", ran.stderr);
    assert!(
        ran.stderr
            .contains("a.yaml: not fixed: the file has 2 names (hard links)"),
        "{}",
        ran.stderr
    );
    let a = std::fs::read_to_string(dir.path().join("a.yaml")).unwrap();
    let b = std::fs::read_to_string(dir.path().join("b.yml")).unwrap();
    assert_eq!(a, FIXABLE);
    assert_eq!(a, b);
}

/// Control characters in a file name (an escape sequence, a line break) are printed escaped in
/// every text output and message, so a name cannot rewrite the terminal or forge a line.
#[cfg(unix)]
#[test]
fn control_characters_in_file_names_are_printed_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let name = "evil\u{1b}[2J\nfake.yaml: error.yaml";
    write(&dir.path().join(name), FIXABLE);
    for format in ["concise", "human", "github"] {
        let ran = run(dir.path(), &["lint", "--format", format, "."], Input::Null);
        ran.sane();
        let out = ran.out();
        assert!(!out.contains('\u{1b}'), "{format}: {out:?}");
        // GitHub's annotations escape the colon of a property value themselves.
        assert!(
            out.contains("evil\\u{1b}[2J\\nfake.yaml"),
            "{format}: {out}"
        );
    }
    let ran = run(dir.path(), &["lint", "nothing\u{1b}[2J.yaml"], Input::Null);
    assert_eq!(ran.sane().code, Some(2));
    assert!(
        ran.stderr.contains("nothing\\u{1b}[2J.yaml"),
        "{}",
        ran.stderr
    );
}
