//! The sockets (Jupyter messaging protocol 5.3 over ZeroMQ, signed with
//! the connection file's key), on a small tokio runtime of their own so
//! that they answer while a cell runs: the heartbeat echoes; the control
//! channel answers `kernel_info`, `interrupt` (it sets the interpreter's
//! interrupt request, which running code polls) and `shutdown`; shell
//! requests are queued for the interpreter thread, which serves them in
//! order; one writer task sends what the interpreter hands it (iopub,
//! shell replies, stdin requests) in the order it was handed, welcomes
//! each iopub subscriber (JEP 65), and flushes the output streams every
//! 50 ms.

use std::sync::{mpsc, Arc};
use std::time::Duration;

use jupyter_protocol::{
    ConnectionInfo, InterruptReply, IoPubWelcome, JupyterMessage, JupyterMessageContent, ReplyStatus,
    ShutdownReply, Status,
};
use jupyter_zmq_client::{
    create_kernel_control_connection, create_kernel_heartbeat_connection,
    create_kernel_iopub_xpub_connection, create_kernel_shell_connection, create_kernel_stdin_connection,
    KernelControlConnection, KernelHeartbeatConnection, KernelIoPubXPubConnection, KernelShellConnection,
    KernelStdinConnection, SubscriptionEvent,
};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use twill_session::interrupt;

use crate::host::{Outbox, Outgoing};

/// The kernel's end of the sockets, for the interpreter thread.
pub(crate) struct Wire {
    /// Shell requests, in the order they came.
    pub(crate) requests: mpsc::Receiver<JupyterMessage>,
    /// Lines typed in answer to an input request (for the host).
    pub(crate) input: mpsc::Receiver<String>,
    pub(crate) outbox: Arc<Outbox>,
    /// Keeps the socket tasks running while the interpreter serves.
    pub(crate) runtime: tokio::runtime::Runtime,
}

struct Sockets {
    heartbeat: KernelHeartbeatConnection,
    shell: KernelShellConnection,
    control: KernelControlConnection,
    stdin: KernelStdinConnection,
    iopub: KernelIoPubXPubConnection,
}

impl Sockets {
    async fn bind(info: &ConnectionInfo, session: &str) -> Result<Sockets, String> {
        let bind = |what: &str, e: jupyter_zmq_client::RuntimeError| {
            format!("cannot open the {what} socket on {}: {e}", info.ip)
        };
        Ok(Sockets {
            heartbeat: create_kernel_heartbeat_connection(info)
                .await
                .map_err(|e| bind("heartbeat", e))?,
            shell: create_kernel_shell_connection(info, session)
                .await
                .map_err(|e| bind("shell", e))?,
            control: create_kernel_control_connection(info, session)
                .await
                .map_err(|e| bind("control", e))?,
            stdin: create_kernel_stdin_connection(info, session)
                .await
                .map_err(|e| bind("stdin", e))?,
            iopub: create_kernel_iopub_xpub_connection(info, session)
                .await
                .map_err(|e| bind("iopub", e))?,
        })
    }
}

/// Binds every socket named in `info` and starts serving them; the
/// control channel answers `kernel_info` with `kernel_info()`.
pub(crate) fn start(
    info: &ConnectionInfo,
    kernel_info: fn() -> JupyterMessageContent,
) -> Result<Wire, String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("twill-kernel-io")
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the kernel's socket threads: {e}"))?;
    let session = format!("twill-{}", std::process::id());
    let sockets = runtime.block_on(Sockets::bind(info, &session))?;
    let (out_tx, out_rx) = unbounded_channel();
    let (request_tx, requests) = mpsc::channel();
    let (input_tx, input) = mpsc::channel();
    let outbox = Arc::new(Outbox::new(out_tx.clone()));
    runtime.spawn(serve(
        sockets,
        out_tx,
        out_rx,
        request_tx,
        input_tx,
        outbox.clone(),
        kernel_info,
    ));
    outbox.iopub(Status::starting());
    Ok(Wire {
        requests,
        input,
        outbox,
        runtime,
    })
}

/// How long the writer waits after the last message before the process
/// exits, so that the sockets deliver it.
const LINGER: Duration = Duration::from_millis(100);

/// Reads that fail (a message with a bad signature, say) are dropped; a
/// socket failing continuously backs off so it cannot spin.
const BACKOFF: Duration = Duration::from_millis(10);

async fn serve(
    sockets: Sockets,
    out_tx: UnboundedSender<Outgoing>,
    mut out_rx: UnboundedReceiver<Outgoing>,
    requests: mpsc::Sender<JupyterMessage>,
    input: mpsc::Sender<String>,
    outbox: Arc<Outbox>,
    kernel_info: fn() -> JupyterMessageContent,
) {
    let Sockets {
        mut heartbeat,
        shell,
        mut control,
        stdin,
        mut iopub,
    } = sockets;
    let (mut shell_tx, mut shell_rx) = shell.split();
    let (mut stdin_tx, mut stdin_rx) = stdin.split();

    tokio::spawn(async move {
        loop {
            if heartbeat.single_heartbeat().await.is_err() {
                tokio::time::sleep(BACKOFF).await;
            }
        }
    });

    tokio::spawn(async move {
        loop {
            match shell_rx.read().await {
                Ok(msg) => {
                    if requests.send(msg).is_err() {
                        return;
                    }
                }
                Err(_) => tokio::time::sleep(BACKOFF).await,
            }
        }
    });

    tokio::spawn(async move {
        loop {
            match stdin_rx.read().await {
                Ok(msg) => {
                    if let JupyterMessageContent::InputReply(reply) = msg.content {
                        let _ = input.send(reply.value);
                    }
                }
                Err(_) => tokio::time::sleep(BACKOFF).await,
            }
        }
    });

    let exit_tx = out_tx.clone();
    tokio::spawn(async move {
        loop {
            match control.read().await {
                Ok(msg) => control_request(&mut control, &msg, &exit_tx, kernel_info).await,
                Err(_) => tokio::time::sleep(BACKOFF).await,
            }
        }
    });

    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(50));
        loop {
            tick.tick().await;
            outbox.flush();
        }
    });

    loop {
        tokio::select! {
            out = out_rx.recv() => {
                // Sends fail only when the peer is gone; the message is then
                // lost with it.
                match out {
                    Some(Outgoing::Iopub(msg)) => { let _ = iopub.send(msg).await; }
                    Some(Outgoing::Shell(msg)) => { let _ = shell_tx.send(msg).await; }
                    Some(Outgoing::Stdin(msg)) => { let _ = stdin_tx.send(msg).await; }
                    Some(Outgoing::Exit(code)) => {
                        tokio::time::sleep(LINGER).await;
                        std::process::exit(code);
                    }
                    None => return,
                }
            }
            event = iopub.recv_subscription() => {
                match event {
                    Ok(SubscriptionEvent::Subscribe(topic)) => {
                        let _ = iopub.send(IoPubWelcome::new(topic).into()).await;
                    }
                    Ok(SubscriptionEvent::Unsubscribe(_)) => {}
                    Err(_) => tokio::time::sleep(BACKOFF).await,
                }
            }
        }
    }
}

/// One control request: answered here, at once, even while a cell runs.
// Requests the control channel does not serve (debug requests) are
// ignored, as a kernel without a debugger does.
#[allow(clippy::wildcard_enum_match_arm)]
async fn control_request(
    control: &mut KernelControlConnection,
    msg: &JupyterMessage,
    out: &UnboundedSender<Outgoing>,
    kernel_info: fn() -> JupyterMessageContent,
) {
    let reply: JupyterMessageContent = match &msg.content {
        JupyterMessageContent::KernelInfoRequest(_) => kernel_info(),
        JupyterMessageContent::InterruptRequest(_) => {
            interrupt::request();
            InterruptReply::new().into()
        }
        JupyterMessageContent::ShutdownRequest(req) => {
            let reply = ShutdownReply {
                restart: req.restart,
                status: ReplyStatus::Ok,
                error: None,
            };
            let _ = control.send(JupyterMessage::new(reply, Some(msg))).await;
            // A running cell stops; the process ends once the writer has
            // sent what is queued.
            interrupt::request();
            let _ = out.send(Outgoing::Exit(0));
            return;
        }
        _ => return,
    };
    let _ = control.send(JupyterMessage::new(reply, Some(msg))).await;
}
