//! A job's writer task: caller input written to its terminal or stdin in order, each
//! input counted out of the queue (src/job/input_queue.rs) once all of it is written.
//!
//! For a restart in place (src/daemon/upgrade/) it stands still like the reader
//! (src/job/freeze.rs): at its next step, with every byte it wrote counted (the writes
//! are cancel-safe to the byte: `Terminal::write_from`, `PipeWriter::write_from`), it
//! leaves in the freeze what it has not written yet and keeps taking input, writing
//! none, until thawed. The hand-over carries that (src/job/carry.rs) and the next
//! image's writer writes it first: every byte once, in order.

use std::collections::VecDeque;
use std::sync::Arc;

use tokio::sync::mpsc;

use super::driver::Writer;
use super::freeze::{Freeze, Unwritten};
use super::{Input, InputQueue};

/// The writer of a job whose descriptors are set in `freeze`, as a future for the job's
/// one I/O task (src/service/launch.rs runs it beside the reader).
pub fn task(
    writer: Writer,
    rx: mpsc::UnboundedReceiver<Input>,
    queued: Arc<InputQueue>,
    freeze: Arc<Freeze>,
) -> impl std::future::Future<Output = ()> {
    // Before the task runs: a freeze asked for before it first runs waits for it.
    freeze.writer_started();
    write_input(writer, rx, queued, freeze)
}

/// Spawns the writer task of a job whose descriptors are set in `freeze`.
pub fn spawn(
    runtime: &tokio::runtime::Handle,
    writer: Writer,
    rx: mpsc::UnboundedReceiver<Input>,
    queued: Arc<InputQueue>,
    freeze: Arc<Freeze>,
) {
    runtime.spawn(task(writer, rx, queued, freeze));
}

/// Writes caller input in order until the job closes its input; `queued` counts what
/// is still to be written (see `Job::write_now`, which writes directly while it is 0).
async fn write_input(
    mut writer: Writer,
    mut rx: mpsc::UnboundedReceiver<Input>,
    queued: Arc<InputQueue>,
    freeze: Arc<Freeze>,
) {
    let mut pending = Pending::default();
    write_queued(&mut writer, &mut rx, &queued, &freeze, &mut pending).await;
    if let Writer::Pipe(stdin) = writer {
        // Closed with its slot emptied first (`freeze`); the queue goes with it.
        freeze.closing_stdin(move || drop((stdin, rx)));
    }
    freeze.writer_ended();
}

/// The inputs taken from the queue and not yet written; the first one written up to
/// `written`.
#[derive(Default)]
struct Pending {
    inputs: VecDeque<Input>,
    written: usize,
}

impl Pending {
    fn unwritten(&self) -> Unwritten {
        let mut unwritten = Unwritten {
            items: self.inputs.len(),
            ..Unwritten::default()
        };
        for (i, input) in self.inputs.iter().enumerate() {
            match input {
                Input::Data(data) => {
                    let from = if i == 0 { self.written } else { 0 };
                    unwritten.bytes.extend_from_slice(data.get(from..).unwrap_or_default());
                }
                Input::Close => {
                    unwritten.close = true;
                    break;
                }
            }
        }
        unwritten
    }
}

/// Returns when the queue is dropped (a kill, a removal), the job closed its input,
/// or the terminal or pipe is gone: the writer is done.
async fn write_queued(
    writer: &mut Writer,
    rx: &mut mpsc::UnboundedReceiver<Input>,
    queued: &InputQueue,
    freeze: &Freeze,
    pending: &mut Pending,
) {
    loop {
        if freeze.wanted() {
            if !stand_still(rx, queued, freeze, pending).await {
                return;
            }
            continue;
        }
        let Pending { inputs, written } = &mut *pending;
        let data = match inputs.front() {
            None => {
                tokio::select! {
                    biased;
                    () = queued.dropped() => return,
                    () = freeze.requested() => {}
                    input = rx.recv() => match input {
                        Some(input) => inputs.push_back(input),
                        None => return,
                    },
                }
                continue;
            }
            // Close: the job is done with its input (see `Job::release_io`, whose close
            // was never counted in: so none is counted out here, as before).
            Some(Input::Close) => return,
            Some(Input::Data(data)) => data,
        };
        let wrote = tokio::select! {
            biased;
            () = queued.dropped() => return,
            () = freeze.requested() => continue,
            wrote = write_from(writer, data, written) => wrote,
        };
        match wrote {
            Ok(()) => {
                queued.release(data.len());
                inputs.pop_front();
                *written = 0;
            }
            // The terminal or the pipe is gone: nothing more is delivered.
            Err(_) => return,
        }
    }
}

async fn write_from(writer: &mut Writer, data: &[u8], written: &mut usize) -> std::io::Result<()> {
    match writer {
        Writer::Pty(terminal) => terminal.write_from(data, written).await,
        Writer::Pipe(stdin) => stdin.write_from(data, written).await,
    }
}

/// Stands still until thawed, taking input meanwhile (written after, in order).
/// `false`: the queue was dropped meanwhile, the writer ends.
async fn stand_still(
    rx: &mut mpsc::UnboundedReceiver<Input>,
    queued: &InputQueue,
    freeze: &Freeze,
    pending: &mut Pending,
) -> bool {
    freeze.writer_holds(pending.unwritten());
    let go_on = loop {
        tokio::select! {
            biased;
            () = queued.dropped() => break false,
            () = freeze.thawed() => break true,
            input = rx.recv() => match input {
                Some(input) => {
                    pending.inputs.push_back(input);
                    freeze.writer_holds(pending.unwritten());
                }
                None => break false,
            },
        }
    };
    freeze.writer_goes_on();
    go_on
}
