// The VS Code side of golint-k8s: one `golint-k8s lsp` per workspace folder (each folder may
// carry its own settings), a status item for their state, and two commands. Diagnostics, quick
// fixes and fix-all all come from the server; this file only starts it and wires it in.

import { execFile } from "node:child_process";
import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
} from "vscode-languageclient/node";
import {
  FIX_ALL_KIND,
  initializationOptions,
  lintOutcome,
  resolveBinary,
  SERVER_SETTINGS,
  ServerState,
  Settings,
  showContainersArgs,
  statusText,
} from "./logic";

const clients = new Map<string, LanguageClient>();
let output: vscode.LogOutputChannel;
let containersOutput: vscode.OutputChannel;
let status: vscode.StatusBarItem;
let problem: string | undefined;
let extensionDir: string;

function settingsFor(folder: vscode.WorkspaceFolder | undefined): Settings {
  const c = vscode.workspace.getConfiguration("golint-k8s", folder);
  return {
    path: c.get<string>("path", ""),
    config: c.get<string>("config", ""),
    nodeCpus: c.get<number | null>("nodeCpus", null),
    inspectImages: c.get<boolean>("inspectImages", false),
  };
}

function binaryFor(folder: vscode.WorkspaceFolder | undefined): ReturnType<typeof resolveBinary> {
  const s = settingsFor(folder);
  // `restrictedConfigurations` keeps an untrusted workspace's value out of `get`; checking
  // trust here as well keeps that true whatever VS Code version runs us.
  const setting = vscode.workspace.isTrusted ? s.path : "";
  return resolveBinary(setting, extensionDir, process.env.PATH);
}

function refreshStatus(): void {
  const states: ServerState[] = [...clients.values()].map((c) =>
    c.state === State.Running ? "running" : c.state === State.Starting ? "starting" : "stopped",
  );
  const { text, tooltip } = statusText(states, problem);
  status.text = text;
  status.tooltip = tooltip;
  status.show();
}

async function startClient(folder: vscode.WorkspaceFolder): Promise<void> {
  const key = folder.uri.toString();
  if (clients.has(key)) {
    return;
  }
  const bin = binaryFor(folder);
  if (!bin.ok) {
    problem = bin.message;
    output.error(bin.message);
    refreshStatus();
    return;
  }
  output.info(`${folder.name}: starting ${bin.binary} lsp (from ${bin.from})`);
  const serverOptions: ServerOptions = {
    command: bin.binary,
    args: ["lsp"],
    options: { cwd: folder.uri.fsPath },
  };
  const pattern = `${folder.uri.fsPath}/**/*`;
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "yaml", pattern },
      { scheme: "file", language: "json", pattern },
    ],
    workspaceFolder: folder,
    initializationOptions: initializationOptions(settingsFor(folder)),
    outputChannel: output,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
  };
  const client = new LanguageClient("golint-k8s", "golint-k8s", serverOptions, clientOptions);
  clients.set(key, client);
  client.onDidChangeState(() => refreshStatus());
  refreshStatus();
  try {
    await client.start();
  } catch (e) {
    output.error(`${folder.name}: the server did not start: ${e}`);
  }
  refreshStatus();
}

async function stopClient(key: string): Promise<void> {
  const client = clients.get(key);
  clients.delete(key);
  if (client) {
    await client.stop().catch(() => undefined);
  }
}

async function restartAll(): Promise<void> {
  problem = undefined;
  await Promise.all([...clients.keys()].map(stopClient));
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    await startClient(folder);
  }
  refreshStatus();
}

async function fixAll(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    return;
  }
  const doc = editor.document;
  const whole = new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length));
  const actions =
    (await vscode.commands.executeCommand<vscode.CodeAction[]>(
      "vscode.executeCodeActionProvider",
      doc.uri,
      whole,
      FIX_ALL_KIND,
    )) ?? [];
  const fix = actions.find((a) => a.kind?.value === FIX_ALL_KIND && a.edit);
  if (!fix?.edit) {
    vscode.window.showInformationMessage("golint-k8s: nothing to fix in this file");
    return;
  }
  await vscode.workspace.applyEdit(fix.edit);
}

async function showContainers(): Promise<void> {
  const doc = vscode.window.activeTextEditor?.document;
  if (!doc || doc.uri.scheme !== "file") {
    vscode.window.showInformationMessage("golint-k8s: open a manifest saved on disk first");
    return;
  }
  const folder = vscode.workspace.getWorkspaceFolder(doc.uri);
  const bin = binaryFor(folder);
  if (!bin.ok) {
    vscode.window.showErrorMessage(bin.message);
    return;
  }
  const args = showContainersArgs(settingsFor(folder), doc.uri.fsPath);
  const cwd = folder?.uri.fsPath;
  const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(bin.binary, args, { cwd, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : null) : 0;
      resolve({ code, stdout, stderr });
    });
  });
  const outcome = lintOutcome(result.code, result.stdout, result.stderr);
  if (!outcome.ok) {
    vscode.window.showErrorMessage(outcome.message);
    return;
  }
  containersOutput.clear();
  if (doc.isDirty) {
    containersOutput.appendLine("(as saved on disk: unsaved changes are not included)");
  }
  containersOutput.append(outcome.text);
  containersOutput.show(true);
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  extensionDir = context.extensionPath;
  output = vscode.window.createOutputChannel("golint-k8s", { log: true });
  containersOutput = vscode.window.createOutputChannel("golint-k8s containers");
  status = vscode.window.createStatusBarItem("golint-k8s.status", vscode.StatusBarAlignment.Right, 100);
  status.name = "golint-k8s";
  status.command = "golint-k8s.showOutput";
  context.subscriptions.push(
    output,
    containersOutput,
    status,
    vscode.commands.registerCommand("golint-k8s.showOutput", () => output.show()),
    vscode.commands.registerCommand("golint-k8s.restart", restartAll),
    vscode.commands.registerCommand("golint-k8s.fixAll", fixAll),
    vscode.commands.registerCommand("golint-k8s.showContainers", showContainers),
    vscode.workspace.onDidChangeWorkspaceFolders(async (e) => {
      for (const f of e.removed) {
        await stopClient(f.uri.toString());
      }
      for (const f of e.added) {
        await startClient(f);
      }
      refreshStatus();
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      // The binary and the initialization options are fixed when a server starts.
      if (SERVER_SETTINGS.some((key) => e.affectsConfiguration(`golint-k8s.${key}`))) {
        await restartAll();
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(restartAll),
  );
  refreshStatus();
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    await startClient(folder);
  }
}

export async function deactivate(): Promise<void> {
  await Promise.all([...clients.keys()].map(stopClient));
}
