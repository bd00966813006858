//! The promises of `sendInput` and `waitFor`, settled through one long-lived
//! `ThreadsafeFunction` per service.
//!
//! napi-rs's `spawn_future` creates a threadsafe function for every promise and spawns
//! two runtime tasks (the future and a panic watcher), each waking a runtime thread:
//! about 25 µs per promise for a future that does nothing, measured here (BENCHMARKS.md,
//! "Sixth session"). Here a settled promise is queued and the one function wakes the JS
//! thread, which settles everything queued since its last call.
//!
//! The function keeps Node alive only while a promise is pending, as a pending
//! `spawn_future` promise did: it is referenced when the first one is created and
//! unreferenced when the last one settles, both on the JS thread. A promise dropped
//! unsettled (its task ended by a panic or by the runtime's shutdown) is rejected, so
//! it can neither hang its caller nor keep Node alive.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use napi::bindgen_prelude::ToNapiValue;
use napi::threadsafe_function::{ThreadsafeCallContext, ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{check_status, sys, Env, Status};

use super::errors::{error_object, Settled};
use native_shell_service::base::sync::lock;

type Wake = ThreadsafeFunction<(), (), (), Status, false, true>;

/// A promise's resolver. Created and used on the JS thread only; between the two it
/// rides along with the work as an opaque pointer.
struct Deferred(sys::napi_deferred);

// SAFETY: the pointer is never dereferenced off the JS thread (see `Deferred`).
unsafe impl Send for Deferred {}

/// What a promise settles with: its value or error, or nothing (its work was dropped).
enum Outcome<T> {
    Settled(Settled<T>),
    Lost,
}

struct Queue<T> {
    settled: Mutex<Vec<(Deferred, Outcome<T>)>>,
    /// Promises created and not yet settled; changed on the JS thread only.
    pending: AtomicUsize,
    /// The function, for the JS-thread callback to unreference it. Weak: the function
    /// owns its callback, which owns this queue.
    wake: OnceLock<Weak<Mutex<Wake>>>,
}

/// Creates promises of `T` on the JS thread and settles them from any thread.
pub struct Settler<T: 'static> {
    queue: Arc<Queue<T>>,
    wake: Arc<Mutex<Wake>>,
}

/// One pending promise; settle it once, from any thread.
pub struct Pending<T: ToNapiValue + Send + 'static> {
    queue: Arc<Queue<T>>,
    wake: Arc<Mutex<Wake>>,
    deferred: Option<Deferred>,
}

impl<T: ToNapiValue + Send + 'static> Settler<T> {
    /// Must run on the JS thread.
    pub fn new(env: &Env, name: &str) -> napi::Result<Self> {
        let queue: Arc<Queue<T>> = Arc::new(Queue {
            settled: Mutex::new(Vec::new()),
            pending: AtomicUsize::new(0),
            wake: OnceLock::new(),
        });
        let drained = queue.clone();
        let function = env
            .create_function_from_closure::<(), (), _>(name, |_| Ok(()))?
            .build_threadsafe_function::<()>()
            .weak::<true>()
            .callee_handled::<false>()
            .build_callback(move |ctx: ThreadsafeCallContext<()>| {
                settle_queued(&ctx.env, &drained);
                Ok(())
            })?;
        let wake = Arc::new(Mutex::new(function));
        let _ = queue.wake.set(Arc::downgrade(&wake));
        Ok(Self { queue, wake })
    }

    /// A new promise (the JS value to return) and its pending settlement. Must run on
    /// the JS thread.
    pub fn promise(&self, env: &Env) -> napi::Result<(sys::napi_value, Pending<T>)> {
        let mut deferred = std::ptr::null_mut();
        let mut promise = std::ptr::null_mut();
        // SAFETY: on the JS thread, with out-pointers to locals.
        check_status!(unsafe { sys::napi_create_promise(env.raw(), &mut deferred, &mut promise) })?;
        if self.queue.pending.fetch_add(1, Ordering::Relaxed) == 0 {
            #[allow(deprecated)] // napi-rs prefers clone counting, which cannot say "none pending".
            let _ = lock(&self.wake).refer(env);
        }
        let pending = Pending {
            queue: self.queue.clone(),
            wake: self.wake.clone(),
            deferred: Some(Deferred(deferred)),
        };
        Ok((promise, pending))
    }
}

impl<T: ToNapiValue + Send + 'static> Pending<T> {
    pub fn settle(mut self, value: Settled<T>) {
        self.queue_settlement(Outcome::Settled(value));
    }

    fn queue_settlement(&mut self, value: Outcome<T>) {
        let Some(deferred) = self.deferred.take() else { return };
        lock(&self.queue.settled).push((deferred, value));
        lock(&self.wake).call((), ThreadsafeFunctionCallMode::NonBlocking);
    }
}

impl<T: ToNapiValue + Send + 'static> Drop for Pending<T> {
    fn drop(&mut self) {
        self.queue_settlement(Outcome::Lost);
    }
}

/// On the JS thread: settles every queued promise, then lets Node exit if none is left.
fn settle_queued<T: ToNapiValue>(env: &Env, queue: &Queue<T>) {
    let settled = std::mem::take(&mut *lock(&queue.settled));
    let count = settled.len();
    let raw = env.raw();
    for (deferred, value) in settled {
        // SAFETY: on the JS thread, with a deferred from `napi_create_promise` that is
        // settled here only, once (it was taken out of its `Pending`).
        unsafe {
            let _ = match value {
                Outcome::Settled(Settled::Ok(v)) => match T::to_napi_value(raw, v) {
                    Ok(js) => sys::napi_resolve_deferred(raw, deferred.0, js),
                    Err(e) => sys::napi_reject_deferred(raw, deferred.0, napi::JsError::from(e).into_value(raw)),
                },
                Outcome::Settled(Settled::Err(e)) => sys::napi_reject_deferred(raw, deferred.0, error_object(env, &e)),
                Outcome::Lost => {
                    let lost = napi::Error::new(Status::GenericFailure, "the wait ended without a result");
                    sys::napi_reject_deferred(raw, deferred.0, napi::JsError::from(lost).into_value(raw))
                }
            };
        }
    }
    if count > 0 && queue.pending.fetch_sub(count, Ordering::Relaxed) == count {
        if let Some(wake) = queue.wake.get().and_then(Weak::upgrade) {
            #[allow(deprecated)] // See `Settler::promise`.
            let _ = lock(&wake).unref(env);
        }
    }
}
