//! Waiting for a process handle to be signalled (the process ended) without parking a
//! thread of our own per job: `RegisterWaitForSingleObject` hands the wait to the system
//! thread pool, which multiplexes up to 63 waits per thread, and its callback completes a
//! oneshot that the job's task awaits.

use std::ffi::c_void;
use std::io;
use std::os::windows::io::{AsRawHandle, OwnedHandle};
use std::ptr;

use tokio::sync::oneshot;
use windows_sys::Win32::Foundation::{HANDLE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Threading::{
    RegisterWaitForSingleObject, UnregisterWaitEx, INFINITE, WT_EXECUTEINWAITTHREAD, WT_EXECUTEONLYONCE,
};

use crate::base::sync::lock;

/// What the callback reaches through its context pointer.
struct Slot {
    fire: std::sync::Mutex<Option<oneshot::Sender<()>>>,
}

/// One registered wait. Dropping it unregisters the wait (waiting for a callback that
/// is running to return), and only then frees the slot the callback uses.
struct Registration {
    wait: HANDLE,
    slot: *mut Slot,
}

// SAFETY: the wait handle may be unregistered from any thread, and the slot is only
// touched through its mutex (by the callback) or after the unregistration (by drop).
unsafe impl Send for Registration {}

impl Drop for Registration {
    fn drop(&mut self) {
        // SAFETY: `wait` came from RegisterWaitForSingleObject and is unregistered once,
        // here. INVALID_HANDLE_VALUE: return only once no callback runs any more, so the
        // slot can be freed. The callback only sends on a channel: this never waits long.
        unsafe {
            UnregisterWaitEx(self.wait, INVALID_HANDLE_VALUE);
            drop(Box::from_raw(self.slot));
        }
    }
}

unsafe extern "system" fn fired(context: *mut c_void, _timed_out: bool) {
    // SAFETY: the context is the slot, which lives until the registration is dropped,
    // and that waits for this callback to return first.
    let slot = unsafe { &*context.cast::<Slot>() };
    if let Some(fire) = lock(&slot.fire).take() {
        let _ = fire.send(());
    }
}

/// Resolves once `handle` is signalled. Cancel-safe: dropping the future unregisters
/// the wait. The caller keeps the handle open until the future is done or dropped.
pub async fn signaled(handle: &OwnedHandle) -> io::Result<()> {
    let (registration, rx) = register(handle)?;
    let result = rx.await;
    drop(registration);
    result.map_err(|_| io::Error::other("the wait for the process was dropped"))
}

fn register(handle: &OwnedHandle) -> io::Result<(Registration, oneshot::Receiver<()>)> {
    let (tx, rx) = oneshot::channel();
    let slot = Box::into_raw(Box::new(Slot {
        fire: std::sync::Mutex::new(Some(tx)),
    }));
    let mut wait: HANDLE = ptr::null_mut();
    // SAFETY: `handle` is open (the caller borrows it for the whole wait); the slot
    // pointer stays valid until `Registration` is dropped, which unregisters the wait
    // first. WT_EXECUTEINWAITTHREAD: the callback is tiny, no worker thread needed.
    let registered = unsafe {
        RegisterWaitForSingleObject(
            &mut wait,
            handle.as_raw_handle(),
            Some(fired),
            slot.cast::<c_void>(),
            INFINITE,
            WT_EXECUTEONLYONCE | WT_EXECUTEINWAITTHREAD,
        )
    };
    if registered == 0 {
        let error = io::Error::last_os_error();
        // SAFETY: the registration failed, so no callback holds the slot.
        drop(unsafe { Box::from_raw(slot) });
        return Err(error);
    }
    Ok((Registration { wait, slot }, rx))
}
