// Starts `twill lsp` (the `twill.path` setting, `twill` on the PATH by
// default) for .tw files, with vscode-languageclient over stdio.
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const command = vscode.workspace.getConfiguration("twill").get("path") || "twill";
  const server = { command, args: ["lsp"] };
  client = new LanguageClient(
    "twill",
    "twill language server",
    { run: server, debug: server },
    { documentSelector: [{ scheme: "file", language: "twill" }, { scheme: "untitled", language: "twill" }] }
  );
  context.subscriptions.push({ dispose: () => client && client.stop() });
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
