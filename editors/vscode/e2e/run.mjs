// End-to-end test of the packaged extension in a real VS Code: code-server with the .vsix
// installed, driven by headless Chromium. It opens a workspace with a Deployment whose Go
// container has a memory limit and no GOMEMLIMIT, waits for GK101 in the Problems panel, applies
// the quick fix, saves, and checks that the file on disk is what `golint-k8s fix` writes.
//
// Environment: CODE_SERVER (its launcher), VSIX (the packaged extension), GOLINT_K8S (the same
// binary the .vsix bundles, for the expected text), CHROMIUM (default /usr/bin/chromium),
// E2E_ARTIFACTS (where screenshots and logs go on failure; default a temporary directory).

import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";

const need = (name) => {
  const v = process.env[name];
  if (!v) {
    console.error(`e2e: set ${name}`);
    process.exit(2);
  }
  return path.resolve(v);
};
const codeServer = need("CODE_SERVER");
const vsix = need("VSIX");
const golint = need("GOLINT_K8S");
const browserPath = process.env.CHROMIUM ?? "/usr/bin/chromium";
const t0 = Date.now();
const say = (msg) => console.log(`e2e [${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}`);

const root = fs.mkdtempSync(path.join(os.tmpdir(), "golint-k8s-e2e-"));
const artifacts = process.env.E2E_ARTIFACTS ? path.resolve(process.env.E2E_ARTIFACTS) : path.join(root, "artifacts");
fs.mkdirSync(artifacts, { recursive: true });
const userData = path.join(root, "user-data");
const extensions = path.join(root, "extensions");
const workspace = path.join(root, "workspace");
fs.mkdirSync(path.join(userData, "User"), { recursive: true });
fs.mkdirSync(workspace);

const manifest = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    metadata:
      annotations:
        golint-k8s.io/runtime: go
    spec:
      containers:
        - name: api
          image: ghcr.io/acme/api:1.0
          resources:
            requests:
              cpu: 100m
              memory: 512Mi
            limits:
              memory: 512Mi
`;
const file = path.join(workspace, "deploy.yaml");
fs.writeFileSync(file, manifest);

// What the command line writes for the same text: the editor's fixes must give the same bytes.
function fixedByCli(name, text) {
  const copy = path.join(root, `expected-${name}`);
  fs.writeFileSync(copy, text);
  try {
    execFileSync(golint, ["fix", copy], { stdio: "pipe" });
  } catch (e) {
    // `fix` exits 1 when problems remain; the text it wrote is still the expectation.
    if (e.status !== 1) throw e;
  }
  const fixed = fs.readFileSync(copy, "utf8");
  if (fixed === text) {
    throw new Error(`e2e: golint-k8s fix changed nothing in ${name}, so the test would prove nothing`);
  }
  return fixed;
}
const expected = fixedByCli("deploy.yaml", manifest);

// Two Go containers without GOMEMLIMIT: "fix all in file" must fix both, as `fix` does.
const twoContainers = `${manifest}        - name: worker
          image: ghcr.io/acme/worker:1.0
          resources:
            requests:
              cpu: 100m
              memory: 1Gi
            limits:
              memory: 1Gi
`;
const twoFile = path.join(workspace, "two.yaml");
fs.writeFileSync(twoFile, twoContainers);
const twoExpected = fixedByCli("two.yaml", twoContainers);

async function untilOnDisk(file, want) {
  const deadline = Date.now() + 30_000;
  let onDisk = fs.readFileSync(file, "utf8");
  while (onDisk !== want && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    onDisk = fs.readFileSync(file, "utf8");
  }
  if (onDisk !== want) {
    const name = path.basename(file);
    throw new Error(`${name} on disk is not what golint-k8s fix writes:\n--- disk\n${onDisk}\n--- fix\n${want}`);
  }
}


fs.writeFileSync(
  path.join(userData, "User", "settings.json"),
  JSON.stringify({
    "security.workspace.trust.enabled": false,
    "workbench.startupEditor": "none",
    "extensions.autoCheckUpdates": false,
    "extensions.autoUpdate": false,
    "telemetry.telemetryLevel": "off",
  }),
);

// code-server, VS Code and Chromium write a config file, logs, a device id and crash reports
// under HOME and the XDG directories: keep them in the test's directory, so that a run leaves
// nothing behind.
const home = path.join(root, "home");
fs.mkdirSync(home);
const env = {
  ...process.env,
  HOME: home,
  XDG_CONFIG_HOME: path.join(home, ".config"),
  XDG_DATA_HOME: path.join(home, ".local", "share"),
  XDG_CACHE_HOME: path.join(home, ".cache"),
};
const configFile = path.join(root, "code-server.yaml");
fs.writeFileSync(configFile, "auth: none\ncert: false\n");
const common = ["--config", configFile, "--user-data-dir", userData, "--extensions-dir", extensions];
say(`installing ${path.basename(vsix)}`);
execFileSync(codeServer, ["--install-extension", vsix, ...common], { stdio: "inherit", env });

const port = await new Promise((resolve, reject) => {
  const s = net.createServer();
  s.listen(0, "127.0.0.1", () => {
    const { port } = s.address();
    s.close(() => resolve(port));
  });
  s.on("error", reject);
});
const base = `http://127.0.0.1:${port}`;
const serverLog = fs.openSync(path.join(artifacts, "code-server.log"), "w");
const server = spawn(
  codeServer,
  ["--auth", "none", "--bind-addr", `127.0.0.1:${port}`, "--disable-telemetry", "--disable-update-check",
    "--disable-workspace-trust", ...common, workspace],
  { stdio: ["ignore", serverLog, serverLog], env, detached: true },
);

let browser;
let page;
let ok = false;
try {
  const started = Date.now();
  for (;;) {
    try {
      const r = await fetch(`${base}/healthz`);
      if (r.ok) break;
    } catch {
      // not listening yet
    }
    if (server.exitCode !== null) throw new Error(`code-server exited with ${server.exitCode}`);
    if (Date.now() - started > 60_000) throw new Error("code-server did not answer within 60 s");
    await new Promise((r) => setTimeout(r, 250));
  }
  say(`code-server answers at ${base}`);

  browser = await chromium.launch({ executablePath: browserPath, args: ["--no-sandbox"], env });
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(`${base}/?folder=${encodeURIComponent(workspace)}`);
  await page.waitForSelector(".monaco-workbench", { timeout: 120_000 });
  say("workbench loaded");

  await page.locator(".monaco-workbench").click({ position: { x: 700, y: 400 } }).catch(() => {});
  // Files are opened with Quick Open and commands run from the palette, as a user does.
  const open = async (name, text) => {
    await page.keyboard.press("Control+P");
    await page.waitForSelector(".quick-input-widget input", { state: "visible", timeout: 30_000 });
    await page.keyboard.type(name);
    await page.locator(".quick-input-list .monaco-list-row", { hasText: name }).first().waitFor({ timeout: 30_000 });
    await page.keyboard.press("Enter");
    await page.locator(".editor-instance .view-lines", { hasText: text }).waitFor({ timeout: 60_000 });
    say(`${name} open`);
  };
  const command = async (category, title) => {
    await page.keyboard.press("F1");
    await page.waitForSelector(".quick-input-widget input", { state: "visible", timeout: 10_000 });
    await page.keyboard.type(`${category}: ${title}`);
    await page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first().waitFor({ timeout: 10_000 });
    await page.keyboard.press("Enter");
  };

  await open("deploy.yaml", "kind: Deployment");
  await page.keyboard.press("Control+Shift+M");
  const row = page.locator(".markers-panel .monaco-list-row", { hasText: "GK101" }).first();
  await row.waitFor({ timeout: 90_000 });
  say(`Problems panel shows: ${(await row.innerText()).replace(/\s+/g, " ").slice(0, 160)}`);

  // Selecting the problem puts the cursor on it; then the quick fix menu, as Ctrl+. opens it.
  await row.click();
  await row.dblclick();
  await page.locator(".editor-instance .monaco-editor.focused").waitFor({ timeout: 10_000 }).catch(() => {});
  await page.keyboard.press("Control+.");
  const fix = page.locator(".action-widget .monaco-list-row", { hasText: "GOMEMLIMIT" }).first();
  await fix.waitFor({ timeout: 30_000 });
  say(`quick fix offered: ${(await fix.innerText()).replace(/\s+/g, " ")}`);
  // The menu takes keys, not clicks (a pointer block covers it while it opens): move the
  // focus to the fix and apply it as a user does.
  const focused = page.locator(".action-widget .monaco-list-row.focused");
  for (let i = 0; i < 10 && !(await focused.innerText().catch(() => "")).includes("GOMEMLIMIT"); i++) {
    await page.keyboard.press("ArrowDown");
  }
  await page.keyboard.press("Enter");
  await page.locator(".editor-instance .view-lines", { hasText: "GOMEMLIMIT" }).waitFor({ timeout: 30_000 });
  await page.keyboard.press("Control+S");
  await untilOnDisk(file, expected);
  say("quick fix: the saved file equals golint-k8s fix's output");

  await page.locator(".statusbar-item", { hasText: "golint-k8s" }).locator(".codicon-check").waitFor({ timeout: 10_000 });
  say("status item: running");

  await command("golint-k8s", "Show container runtimes in file");
  const decision = page.locator(".panel .view-lines", { hasText: "container api: go" });
  await decision.waitFor({ timeout: 30_000 });
  say(`show container runtimes: ${(await decision.innerText()).replace(/\s+/g, " ").slice(0, 160)}`);

  await open("two.yaml", "name: worker");
  await page.keyboard.press("Control+Shift+M");
  // Both containers' findings (deploy.yaml has none left).
  await page.locator(".markers-panel .monaco-list-row", { hasText: "GK101" }).nth(1).waitFor({ timeout: 60_000 });
  await command("golint-k8s", "Fix all in file");
  await page.locator(".editor-instance .view-lines", { hasText: "GOMEMLIMIT" }).waitFor({ timeout: 30_000 });
  await page.keyboard.press("Control+S");
  await untilOnDisk(twoFile, twoExpected);
  say("fix all in file: the saved file equals golint-k8s fix's output");
  ok = true;
  say("all steps passed");
} catch (e) {
  console.error(`e2e: FAILED: ${e.stack ?? e}`);
  if (page) {
    await page.screenshot({ path: path.join(artifacts, "failure.png") }).catch(() => {});
  }
  console.error(`e2e: screenshot and code-server log in ${artifacts}`);
} finally {
  await browser?.close().catch(() => {});
  // The whole process group: code-server's extension host outlives a signal to code-server alone.
  try {
    process.kill(-server.pid, "SIGTERM");
  } catch {
    // already gone
  }
}
// On success nothing is kept; on failure the workspace and logs stay for a look.
if (ok) {
  fs.rmSync(root, { recursive: true, force: true });
}
process.exit(ok ? 0 : 1);
