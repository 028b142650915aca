//! `twill lsp` over its real stdio, driven with lsp-server's message
//! framing as the client side: a dtype error's diagnostic at its range
//! with the checker's note, hover with the static type, completion after
//! `x.`, signature help, go to definition (into an imported module, and
//! of locals), rename of a local binding, document symbols; then every golden program and 300 fuzzer programs
//! fed as edits of one document, each followed by requests, none of
//! which may crash or hang the server.

// A test drives the real binary and writes the documents' files.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]
// Tests may unwrap, and skip the messages they do not look for.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::wildcard_enum_match_arm
)]

use std::io::BufReader;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use lsp_server::{Message, Notification, Request, RequestId};
use serde_json::{json, Value};

struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: i32,
    /// publishDiagnostics notifications seen, in order.
    published: Vec<Value>,
}

impl Client {
    fn start() -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_twill"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut c = Client {
            child,
            stdin,
            stdout,
            next: 0,
            published: Vec::new(),
        };
        let caps = c.request(
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": {}}),
        );
        assert_eq!(caps["capabilities"]["hoverProvider"], true, "{caps}");
        c.notify("initialized", json!({}));
        c
    }

    fn notify(&mut self, method: &str, params: Value) {
        Message::Notification(Notification {
            method: method.into(),
            params,
        })
        .write(&mut self.stdin)
        .unwrap();
    }

    /// Sends a request and reads up to its response (notifications on the
    /// way are kept).
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = RequestId::from(self.next);
        Message::Request(Request {
            id: id.clone(),
            method: method.into(),
            params,
        })
        .write(&mut self.stdin)
        .unwrap();
        loop {
            match Message::read(&mut self.stdout)
                .unwrap()
                .expect("the server closed its output")
            {
                Message::Response(r) if r.id == id => match r.response_result {
                    Ok(result) => return result,
                    Err(e) => panic!("{method}: {e:?}"),
                },
                Message::Notification(n) if n.method == "textDocument/publishDiagnostics" => {
                    self.published.push(n.params)
                }
                _ => {}
            }
        }
    }

    /// The diagnostics last published for `uri` once the server has
    /// answered a request sent after the edit (so the check has run).
    fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        self.request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": uri}}),
        );
        let last = self
            .published
            .iter()
            .rev()
            .find(|p| p["uri"] == uri)
            .expect("no diagnostics published");
        last["diagnostics"].as_array().unwrap().clone()
    }

    fn at(&mut self, method: &str, uri: &str, line: u32, character: u32) -> Value {
        self.request(
            method,
            json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}),
        )
    }

    /// The hover's text at a position (empty when there is none).
    fn hover(&mut self, uri: &str, line: u32, character: u32) -> String {
        let h = self.at("textDocument/hover", uri, line, character);
        h["contents"]["value"].as_str().unwrap_or_default().to_string()
    }

    fn finish(mut self) {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{status}");
    }
}

fn file_uri(path: &std::path::Path) -> String {
    format!("file://{}", path.to_str().unwrap())
}

#[test]
fn diagnostics_hover_completion_definition() {
    let dir = tempfile::tempdir().unwrap();
    let module = dir.path().join("geom.tw");
    std::fs::write(
        &module,
        "# The area of a circle.\nfn area(r: F64) -> F64 {\n    3.14159 * r * r\n}\n",
    )
    .unwrap();
    let main = dir.path().join("main.tw");
    let uri = file_uri(&main);
    let bad = "import geom\nlet a = zeros([2], f16) + zeros([2], bf16)\nlet b: Tensor[f16] = a\n";
    std::fs::write(&main, bad).unwrap();
    let mut c = Client::start();
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "twill", "version": 1, "text": bad}}),
    );
    let diags = c.diagnostics(&uri);
    assert_eq!(diags.len(), 1, "{diags:?}");
    let d = &diags[0];
    assert_eq!(d["severity"], 1);
    assert_eq!(
        d["range"],
        json!({"start": {"line": 2, "character": 21}, "end": {"line": 2, "character": 22}})
    );
    let msg = d["message"].as_str().unwrap();
    assert!(
        msg.starts_with("`b` is annotated `Tensor[f16]` but this value is `Tensor[f32]`"),
        "{msg}"
    );
    assert!(msg.contains("`+` of f16, bf16 gives f32"), "{msg}");

    let good =
        "import geom\nlet a = zeros([2], f16) + zeros([2], bf16)\nlet s = a.sum()\nlet r = geom.area(2.0)\n";
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": good}]}),
    );
    assert_eq!(c.diagnostics(&uri), Vec::<Value>::new());

    // Hover on `a` in `a.sum()`: its static type.
    // And on `a` where it is bound: the type it is bound to, the same note.
    for (line, character) in [(2, 8), (1, 4)] {
        let text = c.hover(&uri, line, character);
        assert!(text.contains("Tensor[f32]"), "{text}");
        assert!(text.contains("`+` of f16, bf16 gives f32"), "{text}");
    }
    let hover = c.at("textDocument/hover", &uri, 1, 4);
    assert_eq!(
        hover["range"]["start"],
        json!({"line": 1, "character": 4}),
        "{hover}"
    );
    // `r`, bound to what a module's function returns: its declared type.
    let text = c.hover(&uri, 3, 4);
    assert!(text.contains("\nF64\n"), "{text}");
    // Hover on a builtin: its help text.
    let text = c.hover(&uri, 1, 10);
    assert!(text.contains("zeros(shape"), "{text}");

    // Completion after `a.`: the tensor's methods.
    let items = c.at("textDocument/completion", &uri, 2, 10);
    let labels: Vec<&str> = items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    assert!(labels.contains(&"sum") && labels.contains(&"to"), "{labels:?}");

    // Signature help inside `zeros(`, at its second argument.
    let sig = c.at("textDocument/signatureHelp", &uri, 1, 19);
    let label = sig["signatures"][0]["label"].as_str().unwrap();
    assert!(label.starts_with("zeros(shape"), "{label}");
    assert_eq!(sig["activeParameter"], 1, "{sig}");

    // Go to definition of `geom.area`: into the module's file.
    let loc = c.at("textDocument/definition", &uri, 3, 14);
    assert_eq!(loc["uri"], file_uri(&module), "{loc}");
    assert_eq!(loc["range"]["start"], json!({"line": 1, "character": 3}));
    // And of a top-level name in this document.
    let loc = c.at("textDocument/definition", &uri, 2, 8);
    assert_eq!(loc["range"]["start"], json!({"line": 1, "character": 4}), "{loc}");

    // Rename a local binding: its definition and every use, nothing else.
    let src = "fn norm(v: Tensor) -> F64 {\n    let s = (v * v).sum()\n    s.sqrt().item()\n}\nlet s = 3\nprint(norm(ones([2])), s)\n";
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": src}]}),
    );
    let edit = c.request(
        "textDocument/rename",
        json!({"textDocument": {"uri": uri}, "position": {"line": 2, "character": 4}, "newName": "sq"}),
    );
    let edits = edit["changes"][uri.as_str()].as_array().unwrap();
    let at: Vec<(u64, u64)> = edits
        .iter()
        .map(|e| {
            (
                e["range"]["start"]["line"].as_u64().unwrap(),
                e["range"]["start"]["character"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(at, [(1, 8), (2, 4)], "{edit}");
    assert!(edits.iter().all(|e| e["newText"] == "sq"));
    // Hover where a function, a parameter and a local are bound.
    let text = c.hover(&uri, 0, 4);
    assert!(text.contains("Fn"), "{text}");
    let text = c.hover(&uri, 0, 8);
    assert!(text.contains("\nTensor\n"), "{text}");
    let text = c.hover(&uri, 1, 8);
    assert!(text.contains("\nTensor\n"), "{text}");
    // Definition of a parameter's use: the parameter.
    let loc = c.at("textDocument/definition", &uri, 1, 13);
    assert_eq!(loc["range"]["start"], json!({"line": 0, "character": 8}), "{loc}");
    // A keyword is not a name.
    c.next += 1;
    Message::Request(Request {
        id: RequestId::from(c.next),
        method: "textDocument/rename".into(),
        params: json!({"textDocument": {"uri": uri}, "position": {"line": 4, "character": 4}, "newName": "while"}),
    })
    .write(&mut c.stdin)
    .unwrap();
    loop {
        if let Message::Response(r) = Message::read(&mut c.stdout).unwrap().unwrap() {
            let err = r.response_result.unwrap_err();
            assert!(err.message.contains("`while` is not a name"), "{}", err.message);
            break;
        }
    }
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 4}, "contentChanges": [{"text": good}]}),
    );

    let symbols = c.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": uri}}),
    );
    let names: Vec<&str> = symbols
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["geom", "a", "s", "r"]);
    c.finish();
}

/// Every `.tw` file under `dir`, sorted.
fn programs(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            programs(&p, out);
        } else if p.extension().is_some_and(|e| e == "tw") {
            out.push(p);
        }
    }
}

#[test]
fn malformed_documents_never_crash_or_hang_the_server() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    programs(&root.join("testdata"), &mut files);
    let mut texts: Vec<String> = files
        .iter()
        .map(|p| String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned())
        .collect();
    assert!(texts.len() > 300, "only {} goldens found", texts.len());
    for n in 0..300 {
        let (bytes, _) = twill_fuzz::program(7, n, &[]);
        texts.push(String::from_utf8_lossy(&bytes).into_owned());
    }
    let dir = tempfile::tempdir().unwrap();
    let uri = file_uri(&dir.path().join("doc.tw"));
    let mut c = Client::start();
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "twill", "version": 0, "text": ""}}),
    );
    for (version, text) in texts.iter().enumerate() {
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version + 1}, "contentChanges": [{"text": text}]}),
        );
        let lines = text.lines().count() as u32;
        // Requests in the middle and past the end of the text.
        c.at("textDocument/hover", &uri, lines / 2, 4);
        c.at("textDocument/completion", &uri, lines / 2, 6);
        c.at("textDocument/signatureHelp", &uri, lines, 0);
        c.at("textDocument/definition", &uri, lines / 3, 2);
        c.request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": uri}}),
        );
    }
    c.finish();
}
