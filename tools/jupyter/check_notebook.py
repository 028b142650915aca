"""The Jupyter kernel as Jupyter itself drives it (spec §12.4).

Executes examples/notebooks/digits.ipynb with nbclient against the
installed `twill` kernel spec and checks every cell's outputs (streams, the
figures' image/png and image/svg+xml, the progress bar, the confusion
matrix's text/html table, the error cell's `error`), then drives a second
kernel with jupyter_client for completion, inspection, is_complete and an
interrupt during a long cell (after which the kernel must still answer).

    tools/jupyter/check_notebook.py [EXECUTED.ipynb]

writes the executed notebook to EXECUTED.ipynb when given. Run by .ci/run
in a venv with tools/jupyter/requirements.txt, after
`twill jupyter install --prefix VENV`.
"""

import base64
import pathlib
import struct
import sys
import time

import jupyter_client
import nbformat
from nbclient import NotebookClient

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "examples" / "notebooks" / "digits.ipynb"


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def outputs_of(cell):
    return cell.get("outputs", [])


def stdout_of(cell):
    return "".join(o["text"] for o in outputs_of(cell) if o["output_type"] == "stream" and o["name"] == "stdout")


def result_of(cell):
    results = [o for o in outputs_of(cell) if o["output_type"] == "execute_result"]
    check(len(results) == 1, f"cell {cell['id']}: expected one execute_result, got {len(results)}")
    return results[0]["data"]


def png_size(b64):
    data = base64.b64decode(b64)
    check(data[:8] == b"\x89PNG\r\n\x1a\n", "image/png is not a PNG")
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def check_notebook(out_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(
        nb,
        kernel_name="twill",
        timeout=600,
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    )
    client.execute()
    if out_path:
        nbformat.write(nb, out_path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    check(len(code) == 6, f"expected 6 code cells, found {len(code)}")
    load, digits, train, curve, confusion, wrong = code[0], code[1], code[2], code[3], code[4], code[5]

    check(stdout_of(load) == "samples: 1797 pixels each: 64\n", f"load cell printed {stdout_of(load)!r}")

    data = result_of(digits)
    check(png_size(data["image/png"]) == (640, 340), "digits figure is not 640x340")
    check(data["image/svg+xml"].lstrip().startswith("<svg"), "digits figure has no SVG")
    check(data["image/svg+xml"].count("<image") == 8, "digits figure does not show 8 images")
    check(data["text/plain"].startswith("Figure(640×340"), f"figure text {data['text/plain']!r}")

    bars = [o for o in outputs_of(train) if o["output_type"] == "display_data"]
    check(len(bars) == 1, f"training cell: expected one progress display, got {len(bars)}")
    bar = bars[0]["data"]["text/plain"]
    check(bar.startswith("epoch 100%|") and "20/20" in bar and "loss " in bar, f"progress bar {bar!r}")
    printed = stdout_of(train)
    check(printed.startswith("mean training loss: first epoch "), f"training printed {printed!r}")
    first, last = (float(w.rstrip(",")) for w in printed.split() if w[0].isdigit())
    check(last < first / 4, f"training loss did not fall: {first} -> {last}")

    data = result_of(curve)
    check(png_size(data["image/png"]) == (640, 480), "loss curve is not 640x480")
    check("bf16 training loss" in data["image/svg+xml"], "loss curve has no legend entry")

    check(stdout_of(confusion).startswith("test accuracy: 0.9"), f"accuracy {stdout_of(confusion)!r}")
    data = result_of(confusion)
    html = data["text/html"]
    check("Tensor[i32] of shape [10, 10]" in html, "confusion matrix table has no shape and dtype")
    check(html.count("<td>") == 100, "confusion matrix table does not have 100 cells")
    check(data["text/plain"].endswith("i32"), "confusion matrix text is not an i32 tensor")

    errors = [o for o in outputs_of(wrong) if o["output_type"] == "error"]
    check(len(errors) == 1, "the error cell has no error output")
    tb = "\n".join(errors[0]["traceback"])
    check("shapes [1437, 64] and [360, 64] do not match" in tb, f"error traceback {tb!r}")
    check("<repl>:1:13" in tb, "the error does not point at the cell's line and column")
    print("notebook: every cell's outputs as expected")


def reply(kc, msg_id, timeout=60):
    while True:
        msg = kc.get_shell_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") == msg_id:
            return msg["content"]


def check_requests():
    km, kc = jupyter_client.manager.start_new_kernel(kernel_name="twill")
    try:
        info = kc.kernel_info(reply=True)["content"]
        check(info["language_info"]["name"] == "twill", f"kernel_info {info}")
        check(info["protocol_version"] == "5.3", f"protocol {info['protocol_version']}")

        code = "zeros([2], f32)."
        got = kc.complete(code, len(code), reply=True)["content"]
        check({"sum", "to", "shape"} <= set(got["matches"]), f"complete offered {got['matches'][:20]}")
        check(got["cursor_start"] == len(code) and got["cursor_end"] == len(code), f"complete cursor {got}")

        got = kc.inspect("softmax(x)", 3, reply=True)["content"]
        check(got["found"], "inspect found nothing for softmax")
        check(got["data"]["text/plain"].startswith("softmax(x, axis="), f"inspect {got['data']}")

        got = reply(kc, kc.is_complete("fn f() {"))
        check(got["status"] == "incomplete", f"is_complete {got}")

        kc.execute_interactive("var n = 0", timeout=60)
        msg_id = kc.execute("while true { n += 1 }")
        time.sleep(1.0)
        km.interrupt_kernel()
        got = reply(kc, msg_id)
        check(got["status"] == "error" and got["evalue"] == "interrupted", f"interrupted cell replied {got}")
        outputs = []
        got = kc.execute_interactive("n > 0", timeout=60, output_hook=outputs.append)
        check(got["content"]["status"] == "ok", "the kernel did not survive the interrupt")
        results = [m["content"]["data"]["text/plain"] for m in outputs if m["msg_type"] == "execute_result"]
        check(results == ["true"], f"after the interrupt: {results}")
        print("requests: kernel_info, complete, inspect, is_complete, interrupt as expected")
    finally:
        km.shutdown_kernel(now=False)
    check(not km.is_alive(), "the kernel is still running after shutdown")


if __name__ == "__main__":
    check_notebook(sys.argv[1] if len(sys.argv) > 1 else None)
    check_requests()
