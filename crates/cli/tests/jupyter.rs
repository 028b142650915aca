//! The Jupyter kernel over its real sockets, driven by a Rust client (no
//! Python needed; `.ci/run` also runs the digits notebook through
//! jupyter_client and nbclient): `twill jupyter kernel FILE` is started as
//! Jupyter starts it, and each request's replies and iopub messages are
//! checked — streams, a tensor's text and HTML table, a figure's PNG and
//! SVG, an error with its diagnostic, completion, inspection,
//! `is_complete`, an interrupt during a long cell (the session goes on),
//! and shutdown.

// A test drives the real binary and writes the connection file.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]
// Tests may unwrap, and pick the messages they look for out of the
// protocol's many.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::wildcard_enum_match_arm
)]

use std::net::{IpAddr, Ipv4Addr};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use jupyter_protocol::{
    CompleteRequest, ConnectionInfo, ExecuteRequest, InspectRequest, InterruptRequest, IsCompleteReplyStatus,
    IsCompleteRequest, JupyterMessage, JupyterMessageContent, KernelInfoRequest, MediaType, ReplyStatus,
    ShutdownRequest, Transport,
};
use jupyter_zmq_client::{
    create_client_control_connection, create_client_iopub_connection,
    create_client_shell_connection_with_identity, peek_ports_with_listeners, peer_identity_for_session,
    ClientControlConnection, ClientIoPubConnection, ClientShellConnection,
};

const TIMEOUT: Duration = Duration::from_secs(60);

struct Client {
    kernel: Child,
    shell: ClientShellConnection,
    iopub: ClientIoPubConnection,
    control: ClientControlConnection,
    _dir: tempfile::TempDir,
}

/// What one request produced: its reply and its iopub messages up to idle.
struct Outcome {
    reply: JupyterMessageContent,
    iopub: Vec<JupyterMessageContent>,
}

impl Outcome {
    fn stdout(&self) -> String {
        self.iopub
            .iter()
            .filter_map(|m| match m {
                JupyterMessageContent::StreamContent(s)
                    if matches!(s.name, jupyter_protocol::Stdio::Stdout) =>
                {
                    Some(s.text.clone())
                }
                _ => None,
            })
            .collect()
    }

    /// The media types of the execute_result, and each one's data.
    fn result(&self) -> Vec<MediaType> {
        self.iopub
            .iter()
            .find_map(|m| match m {
                JupyterMessageContent::ExecuteResult(r) => Some(r.data.content.clone()),
                _ => None,
            })
            .unwrap_or_default()
    }
}

async fn start() -> Client {
    let ip = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let (ports, listeners) = peek_ports_with_listeners(ip, 5).await.unwrap();
    let info = ConnectionInfo {
        transport: Transport::TCP,
        ip: ip.to_string(),
        shell_port: ports[0],
        iopub_port: ports[1],
        stdin_port: ports[2],
        control_port: ports[3],
        hb_port: ports[4],
        signature_scheme: "hmac-sha256".to_string(),
        key: uuid::Uuid::new_v4().to_string(),
        kernel_name: Some("twill".to_string()),
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kernel.json");
    std::fs::write(&file, serde_json::to_string(&info).unwrap()).unwrap();
    drop(listeners);
    let kernel = Command::new(env!("CARGO_BIN_EXE_twill"))
        .args(["jupyter", "kernel"])
        .arg(&file)
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let session = uuid::Uuid::new_v4().to_string();
    let identity = peer_identity_for_session(&session).unwrap();
    // The kernel binds; connections retry until it has.
    let shell = create_client_shell_connection_with_identity(&info, &session, identity)
        .await
        .unwrap();
    let iopub = create_client_iopub_connection(&info, "", &session).await.unwrap();
    let control = create_client_control_connection(&info, &session).await.unwrap();
    let mut client = Client {
        kernel,
        shell,
        iopub,
        control,
        _dir: dir,
    };
    // kernel_info until the iopub subscription is live (as jupyter_client
    // does): then no message of a request can be missed.
    loop {
        let out = tokio::time::timeout(
            Duration::from_secs(2),
            client.request(KernelInfoRequest {}.into()),
        )
        .await;
        if let Ok(out) = out {
            if out
                .iopub
                .iter()
                .any(|m| matches!(m, JupyterMessageContent::Status(_)))
            {
                break;
            }
        }
    }
    client
}

/// A failed assertion must not leave the kernel running.
impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.kernel.kill();
        let _ = self.kernel.wait();
    }
}

impl Client {
    async fn request(&mut self, content: JupyterMessageContent) -> Outcome {
        let msg: JupyterMessage = JupyterMessage::new(content, None);
        let id = msg.header.msg_id.clone();
        self.shell.send(msg).await.unwrap();
        self.outcome(&id).await
    }

    /// The reply to request `id` and its iopub messages up to idle.
    async fn outcome(&mut self, id: &String) -> Outcome {
        let reply = loop {
            let r = self.shell.read().await.unwrap();
            if r.parent_header.as_ref().map(|h| &h.msg_id) == Some(id) {
                break r.content;
            }
        };
        let mut iopub = Vec::new();
        loop {
            let m = self.iopub.read().await.unwrap();
            if m.parent_header.as_ref().map(|h| &h.msg_id) != Some(id) {
                continue;
            }
            if let JupyterMessageContent::Status(s) = &m.content {
                if s.execution_state == jupyter_protocol::ExecutionState::Idle {
                    break;
                }
                iopub.push(m.content);
                continue;
            }
            iopub.push(m.content);
        }
        Outcome { reply, iopub }
    }

    async fn execute(&mut self, code: &str) -> Outcome {
        let req = ExecuteRequest::new(code.to_string());
        tokio::time::timeout(TIMEOUT, self.request(req.into()))
            .await
            .unwrap()
    }
}

fn plain(media: &[MediaType]) -> Option<String> {
    media.iter().find_map(|m| match m {
        MediaType::Plain(t) => Some(t.clone()),
        _ => None,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notebook_session_over_the_protocol() {
    let mut c = start().await;

    // Output streams; the last expression is the result, as text and as
    // an HTML table with shape and dtype; state persists across cells.
    let out = c
        .execute("print(\"hello\", 1 + 2)\nlet x = ones([2, 3], bf16)\nx")
        .await;
    assert_eq!(out.stdout(), "hello 3\n");
    let JupyterMessageContent::ExecuteReply(reply) = &out.reply else {
        panic!("not an execute reply: {:?}", out.reply)
    };
    assert_eq!(reply.status, ReplyStatus::Ok);
    assert_eq!(reply.execution_count.value(), 1);
    let result = out.result();
    assert_eq!(plain(&result).unwrap(), "[[1, 1, 1],\n [1, 1, 1]] bf16");
    let html = result
        .iter()
        .find_map(|m| match m {
            MediaType::Html(h) => Some(h.clone()),
            _ => None,
        })
        .unwrap();
    assert!(html.contains("Tensor[bf16] of shape [2, 3]"), "{html}");
    assert_eq!(html.matches("<td>1</td>").count(), 6, "{html}");

    let out = c.execute("x.sum()").await;
    assert!(
        plain(&out.result()).unwrap().starts_with('6'),
        "{:?}",
        out.result()
    );

    // A figure as the cell's value: PNG (a real one) and SVG.
    let out = c
        .execute("let fig = figure()\nfig.line([0.0, 1.0, 2.0], [0.0, 1.0, 4.0], label=\"y\")\nfig")
        .await;
    let result = out.result();
    let png = result.iter().find_map(|m| match m {
        MediaType::Png(b) => Some(b.clone()),
        _ => None,
    });
    assert!(png.unwrap().starts_with("iVBORw0KGgo"), "not base64 PNG");
    assert!(result
        .iter()
        .any(|m| matches!(m, MediaType::Svg(s) if s.starts_with("<svg"))));
    // `display` shows it without being the value.
    let out = c.execute("display(fig)\n1").await;
    assert!(out
        .iopub
        .iter()
        .any(|m| matches!(m, JupyterMessageContent::DisplayData(d) if d.data.content.iter().any(|t| matches!(t, MediaType::Png(_))))));

    // An error: an `error` message whose traceback is the diagnostic, and
    // an error reply; output printed before it stays.
    let out = c.execute("print(\"before\")\nlet bad = x @ ones([4], f32)").await;
    let JupyterMessageContent::ExecuteReply(reply) = &out.reply else {
        panic!("not an execute reply")
    };
    assert_eq!(reply.status, ReplyStatus::Error);
    let err = out
        .iopub
        .iter()
        .find_map(|m| match m {
            JupyterMessageContent::ErrorOutput(e) => Some(e.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        err.evalue.contains("matmul") || err.evalue.contains('@'),
        "{}",
        err.evalue
    );
    assert!(
        err.traceback.concat().contains("<repl>:2:"),
        "{:?}",
        err.traceback
    );

    // Completion from the checker's type table.
    let code = "x.su";
    let out = c
        .request(
            CompleteRequest {
                code: code.into(),
                cursor_pos: 4,
            }
            .into(),
        )
        .await;
    let JupyterMessageContent::CompleteReply(reply) = out.reply else {
        panic!("not a complete reply")
    };
    assert!(reply.matches.iter().any(|m| m == "sum"), "{:?}", reply.matches);
    assert_eq!((reply.cursor_start, reply.cursor_end), (2, 4));

    // Inspection: the registry's help text.
    let out = c
        .request(
            InspectRequest {
                code: "softmax(x)".into(),
                cursor_pos: 3,
                detail_level: Some(0),
            }
            .into(),
        )
        .await;
    let JupyterMessageContent::InspectReply(reply) = out.reply else {
        panic!("not an inspect reply")
    };
    assert!(reply.found);
    assert!(plain(&reply.data.content)
        .unwrap()
        .starts_with("softmax(x, axis="));

    let out = c
        .request(
            IsCompleteRequest {
                code: "fn f() {".into(),
            }
            .into(),
        )
        .await;
    let JupyterMessageContent::IsCompleteReply(reply) = out.reply else {
        panic!("not an is_complete reply")
    };
    assert_eq!(reply.status, IsCompleteReplyStatus::Incomplete);

    // An interrupt during a long cell stops it; the session goes on.
    let req: JupyterMessage = ExecuteRequest::new("var n = 0\nwhile true { n += 1 }".into()).into();
    let id = req.header.msg_id.clone();
    c.shell.send(req).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    c.control.send(InterruptRequest {}.into()).await.unwrap();
    let out = tokio::time::timeout(TIMEOUT, c.outcome(&id)).await.unwrap();
    let JupyterMessageContent::ExecuteReply(reply) = &out.reply else {
        panic!("not an execute reply")
    };
    assert_eq!(reply.status, ReplyStatus::Error);
    assert!(out
        .iopub
        .iter()
        .any(|m| matches!(m, JupyterMessageContent::ErrorOutput(e) if e.evalue == "interrupted")));
    let out = c.execute("n > 0 and x.shape[1] == 3").await;
    assert_eq!(plain(&out.result()), Some("true".to_string()), "{:?}", out.iopub);

    // Shutdown ends the process.
    c.control
        .send(ShutdownRequest { restart: false }.into())
        .await
        .unwrap();
    let status = tokio::task::spawn_blocking(move || {
        let status = c.kernel.wait();
        (status, c)
    })
    .await
    .unwrap()
    .0
    .unwrap();
    assert!(status.success(), "{status}");
}
