import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import {
  initializationOptions,
  lintOutcome,
  resolveBinary,
  SERVER_SETTINGS,
  Settings,
  showContainersArgs,
  statusText,
} from "../logic";

const defaults: Settings = { path: "", config: "", nodeCpus: null, inspectImages: false };

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "golint-k8s-vscode-"));
}

function writeExecutable(file: string, mode = 0o755): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, "#!/bin/sh\necho golint-k8s 0.0.0\n");
  fs.chmodSync(file, mode);
  return file;
}

const unix = process.platform !== "win32";

test("bundled binary is preferred to the one on PATH", { skip: !unix }, () => {
  const ext = tempDir();
  const onPath = tempDir();
  const bundled = writeExecutable(path.join(ext, "bin", "golint-k8s"));
  writeExecutable(path.join(onPath, "golint-k8s"));
  assert.deepEqual(resolveBinary("", ext, onPath), { ok: true, binary: bundled, from: "bundled" });
});

test("without a bundled binary the first on PATH runs", { skip: !unix }, () => {
  const ext = tempDir();
  const first = tempDir();
  const second = tempDir();
  const want = writeExecutable(path.join(first, "golint-k8s"));
  writeExecutable(path.join(second, "golint-k8s"));
  const r = resolveBinary("", ext, [first, second].join(path.delimiter));
  assert.deepEqual(r, { ok: true, binary: want, from: "PATH" });
  // and the found file really runs
  assert.equal(execFileSync(want).toString().trim(), "golint-k8s 0.0.0");
});

test("a bundled file that is not executable is passed over", { skip: !unix }, () => {
  const ext = tempDir();
  const onPath = tempDir();
  writeExecutable(path.join(ext, "bin", "golint-k8s"), 0o644);
  const want = writeExecutable(path.join(onPath, "golint-k8s"));
  assert.deepEqual(resolveBinary("", ext, onPath), { ok: true, binary: want, from: "PATH" });
});

test("relative PATH entries are never searched", { skip: !unix }, () => {
  const ext = tempDir();
  const cwd = process.cwd();
  const dir = tempDir();
  writeExecutable(path.join(dir, "golint-k8s"));
  process.chdir(dir);
  try {
    const r = resolveBinary("", ext, ["", "."].join(path.delimiter));
    assert.equal(r.ok, false);
  } finally {
    process.chdir(cwd);
  }
});

test("the path setting wins over the bundled binary", { skip: !unix }, () => {
  const ext = tempDir();
  writeExecutable(path.join(ext, "bin", "golint-k8s"));
  const mine = writeExecutable(path.join(tempDir(), "my-golint-k8s"));
  assert.deepEqual(resolveBinary(mine, ext, ""), { ok: true, binary: mine, from: "setting" });
});

test("a path setting that points nowhere is an error, not a fall-back", { skip: !unix }, () => {
  const ext = tempDir();
  writeExecutable(path.join(ext, "bin", "golint-k8s"));
  const missing = path.join(tempDir(), "nope");
  const r = resolveBinary(missing, ext, "");
  assert.equal(r.ok, false);
  assert.match(!r.ok ? r.message : "", /not an executable file/);
});

test("a bare name in the path setting is looked up on PATH", { skip: !unix }, () => {
  const dir = tempDir();
  const want = writeExecutable(path.join(dir, "golint-k8s-nightly"));
  assert.deepEqual(resolveBinary("golint-k8s-nightly", tempDir(), dir), {
    ok: true,
    binary: want,
    from: "setting",
  });
  const r = resolveBinary("sub/golint-k8s", tempDir(), dir);
  assert.equal(r.ok, false);
});

test("no binary anywhere says how to get one", () => {
  const r = resolveBinary("", tempDir(), tempDir());
  assert.equal(r.ok, false);
  assert.match(!r.ok ? r.message : "", /golint-k8s\.path/);
});

test("node-cpus reaches the server only when set to a count", () => {
  assert.deepEqual(initializationOptions(defaults), {});
  assert.deepEqual(initializationOptions({ ...defaults, nodeCpus: 16 }), { "node-cpus": 16 });
  assert.deepEqual(initializationOptions({ ...defaults, nodeCpus: 0 }), {});
  assert.deepEqual(initializationOptions({ ...defaults, nodeCpus: 2.5 }), {});
});

test("the config file reaches the server when set, inspect-images only when on", () => {
  assert.deepEqual(initializationOptions({ ...defaults, config: "  " }), {});
  assert.deepEqual(initializationOptions({ ...defaults, config: " ci/gk.yaml " }), { config: "ci/gk.yaml" });
  assert.deepEqual(initializationOptions({ ...defaults, inspectImages: true }), { "inspect-images": true });
  assert.deepEqual(initializationOptions({ ...defaults, inspectImages: false }), {});
});

test("show-containers passes the settings and ends options before the file", () => {
  assert.deepEqual(showContainersArgs(defaults, "-odd.yaml"), ["lint", "--show-containers", "--", "-odd.yaml"]);
  assert.deepEqual(
    showContainersArgs({ path: "", config: " ci/gk.yaml ", nodeCpus: 8, inspectImages: true }, "/w/d.yaml"),
    ["lint", "--show-containers", "--config", "ci/gk.yaml", "--node-cpus", "8", "--inspect-images", "--", "/w/d.yaml"],
  );
});

test("lint exit 1 is an answer, exit 2 and signals are failures", () => {
  assert.deepEqual(lintOutcome(1, "out", ""), { ok: true, text: "out" });
  assert.deepEqual(lintOutcome(2, "", "error: no such file\n"), {
    ok: false,
    message: "golint-k8s failed (exit 2): error: no such file",
  });
  assert.equal(lintOutcome(null, "", "").ok, false);
});

test("one stopped server shows in the status item", () => {
  assert.match(statusText(["running", "stopped"]).text, /error/);
  assert.match(statusText(["running", "starting"]).text, /spin/);
  assert.match(statusText(["running", "running"]).tooltip, /2 servers running/);
  assert.equal(statusText(["running"], "no binary").tooltip, "no binary");
});

test("every setting that restarts the servers is one the package declares", () => {
  // out/test/ → the package's manifest, two directories up from out/.
  const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8"));
  const declared = Object.keys(manifest.contributes.configuration.properties);
  for (const key of SERVER_SETTINGS) {
    assert.ok(declared.includes(`golint-k8s.${key}`), `golint-k8s.${key} is not declared`);
  }
});
