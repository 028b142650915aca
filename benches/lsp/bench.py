"""Language-server latency (spec §12.5, issue 16): the wall time from an
edit of a 2,000-line document (`textDocument/didChange`, full sync) to its
`publishDiagnostics`, median of 30 edits, each followed by the next only
after the diagnostics arrived. The document is 500 small functions that
mix dtypes (so the checker does real work) plus their calls; each edit
changes one literal, so every check sees a new text.

    cargo build --release && python3 benches/lsp/bench.py [TWILL]
"""
import json
import statistics
import subprocess
import sys
import time


def send(proc, msg):
    body = json.dumps(msg).encode()
    proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    proc.stdin.flush()


def read(proc):
    length = None
    while True:
        line = proc.stdout.readline()
        if line in (b"\r\n", b""):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(proc.stdout.read(length))


def document(k):
    lines = []
    for i in range(500):
        lines += [
            f"fn f{i}(a: Tensor[f32], b: Tensor[bf16]) -> Tensor[f32] {{",
            f"    let c = a * {k + i}.5 + b.to(f32)",
            "    (c - c.mean()).abs()",
            "}",
        ]
    lines[-1] = "}"
    assert len(lines) == 2000
    return "\n".join(lines) + "\n"


def until_diagnostics(proc):
    while True:
        msg = read(proc)
        if msg.get("method") == "textDocument/publishDiagnostics":
            return msg["params"]


def main():
    twill = sys.argv[1] if len(sys.argv) > 1 else "target/release/twill"
    proc = subprocess.Popen([twill, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"processId": None, "rootUri": None, "capabilities": {}}})
    read(proc)
    send(proc, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
    uri = "file:///tmp/twill-lsp-bench.tw"
    send(proc, {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": uri, "languageId": "twill", "version": 0, "text": document(0)}}})
    first = until_diagnostics(proc)
    assert first["diagnostics"] == [], first["diagnostics"][:3]
    times = []
    for k in range(1, 31):
        text = document(k)
        start = time.perf_counter()
        send(proc, {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": k}, "contentChanges": [{"text": text}]}})
        until_diagnostics(proc)
        times.append(1000 * (time.perf_counter() - start))
    send(proc, {"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None})
    read(proc)
    send(proc, {"jsonrpc": "2.0", "method": "exit", "params": None})
    proc.wait(timeout=10)
    print(f"2,000-line document, edit to diagnostics: median {statistics.median(times):.1f} ms, "
          f"min {min(times):.1f} ms, max {max(times):.1f} ms (30 edits)")


if __name__ == "__main__":
    main()
