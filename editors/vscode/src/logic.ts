// What the extension decides without VS Code: which binary runs, with which arguments and
// options, and what the status item says. Kept apart from `extension.ts` so that `node --test`
// can check it against real files and processes, with no editor running.

import * as fs from "node:fs";
import * as path from "node:path";

/** The code action kind of the server's fix-all (the server offers it on every file it fixes). */
export const FIX_ALL_KIND = "source.fixAll.golint-k8s";

/** The extension's settings, as read for one workspace folder. */
export interface Settings {
  /** `golint-k8s.path`: empty for "the bundled binary, then PATH". */
  path: string;
  /** `golint-k8s.config`: empty for "the nearest config file". */
  config: string;
  nodeCpus: number | null;
  inspectImages: boolean;
}

export type Resolved =
  | { ok: true; binary: string; from: "setting" | "bundled" | "PATH" }
  | { ok: false; message: string };

export function executableName(platform: NodeJS.Platform = process.platform): string {
  return platform === "win32" ? "golint-k8s.exe" : "golint-k8s";
}

function isExecutableFile(p: string): boolean {
  try {
    if (!fs.statSync(p).isFile()) {
      return false;
    }
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name: string, pathVar: string | undefined): string | undefined {
  for (const dir of (pathVar ?? "").split(path.delimiter)) {
    // An empty PATH entry means the current directory, which is the workspace here: never
    // run a binary from there without the user naming it.
    if (dir === "" || !path.isAbsolute(dir)) {
      continue;
    }
    const candidate = path.join(dir, name);
    if (isExecutableFile(candidate)) {
      return candidate;
    }
  }
  return undefined;
}

/**
 * The binary to run: the setting when given (a path, or a bare name looked up on PATH), else the
 * one bundled in the extension's `bin/`, else the first on PATH. A setting that points nowhere is
 * an error rather than a silent fall-back, so the user learns their setting is not in effect.
 */
export function resolveBinary(
  setting: string,
  extensionDir: string,
  pathVar: string | undefined,
  platform: NodeJS.Platform = process.platform,
): Resolved {
  const wanted = setting.trim();
  if (wanted !== "") {
    if (path.isAbsolute(wanted)) {
      return isExecutableFile(wanted)
        ? { ok: true, binary: wanted, from: "setting" }
        : { ok: false, message: `golint-k8s.path is ${wanted}, which is not an executable file` };
    }
    if (wanted.includes("/") || wanted.includes("\\")) {
      return {
        ok: false,
        message: `golint-k8s.path is ${wanted}: give an absolute path, or a bare name to find on PATH`,
      };
    }
    const found = onPath(wanted, pathVar);
    return found
      ? { ok: true, binary: found, from: "setting" }
      : { ok: false, message: `golint-k8s.path is ${wanted}, which is not on PATH` };
  }
  const bundled = path.join(extensionDir, "bin", executableName(platform));
  if (isExecutableFile(bundled)) {
    return { ok: true, binary: bundled, from: "bundled" };
  }
  const found = onPath(executableName(platform), pathVar);
  if (found) {
    return { ok: true, binary: found, from: "PATH" };
  }
  return {
    ok: false,
    message:
      "no golint-k8s binary: this package bundles none for this platform and none is on PATH " +
      "(install one, or set golint-k8s.path)",
  };
}

/**
 * The settings a server reads when it starts (its binary and its `initializationOptions`): a
 * change to one restarts the servers.
 */
export const SERVER_SETTINGS = ["path", "config", "nodeCpus", "inspectImages"] as const;

/**
 * The server's `initializationOptions`: `node-cpus`; `config`, one config file for every document
 * (as `--config`; a relative path is taken from the workspace folder, where the server runs),
 * else the server finds the config next to each document, as the command line does; and
 * `inspect-images` only when on, so that a config file that turns it on is not overruled by the
 * setting's default.
 */
export function initializationOptions(s: Settings): Record<string, unknown> {
  const opts: Record<string, unknown> = {};
  if (s.nodeCpus !== null && Number.isInteger(s.nodeCpus) && s.nodeCpus >= 1) {
    opts["node-cpus"] = s.nodeCpus;
  }
  if (s.config.trim() !== "") {
    opts["config"] = s.config.trim();
  }
  if (s.inspectImages) {
    opts["inspect-images"] = true;
  }
  return opts;
}

/** The command line of "show container runtimes": `lint --show-containers` on one file. */
export function showContainersArgs(s: Settings, file: string): string[] {
  const args = ["lint", "--show-containers"];
  if (s.config.trim() !== "") {
    args.push("--config", s.config.trim());
  }
  if (s.nodeCpus !== null && Number.isInteger(s.nodeCpus) && s.nodeCpus >= 1) {
    args.push("--node-cpus", String(s.nodeCpus));
  }
  if (s.inspectImages) {
    args.push("--inspect-images");
  }
  // `--` so that a file whose name starts with a dash is not read as an option.
  args.push("--", file);
  return args;
}

/**
 * What a finished `lint` run means. Exit 0 and 1 are answers (1: problems were found); 2 is a
 * usage or I/O failure, whose reason is on standard error; anything else (a signal) is a crash.
 */
export function lintOutcome(
  code: number | null,
  stdout: string,
  stderr: string,
): { ok: true; text: string } | { ok: false; message: string } {
  if (code === 0 || code === 1) {
    return { ok: true, text: stdout };
  }
  const reason = stderr.trim() || stdout.trim() || "no output";
  return {
    ok: false,
    message: code === null ? `golint-k8s was killed: ${reason}` : `golint-k8s failed (exit ${code}): ${reason}`,
  };
}

export type ServerState = "starting" | "running" | "stopped";

/**
 * The status item for the servers of all workspace folders: the worst state wins, since one
 * folder without diagnostics is what the user needs to notice.
 */
export function statusText(states: ServerState[], problem?: string): { text: string; tooltip: string } {
  if (problem) {
    return { text: "$(error) golint-k8s", tooltip: problem };
  }
  if (states.length === 0) {
    return { text: "golint-k8s", tooltip: "golint-k8s: no server (open a YAML or JSON manifest)" };
  }
  const stopped = states.filter((s) => s === "stopped").length;
  if (stopped > 0) {
    return {
      text: "$(error) golint-k8s",
      tooltip: `golint-k8s: ${stopped} of ${states.length} servers stopped (see the output)`,
    };
  }
  if (states.includes("starting")) {
    return { text: "$(sync~spin) golint-k8s", tooltip: "golint-k8s: starting" };
  }
  return {
    text: "$(check) golint-k8s",
    tooltip: states.length === 1 ? "golint-k8s: running" : `golint-k8s: ${states.length} servers running`,
  };
}
