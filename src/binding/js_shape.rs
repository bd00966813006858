//! Objects with a fixed set of keys: results built by a JS object literal, options
//! read by a JS array literal.
//!
//! napi-rs builds an `#[napi(object)]` value with `napi_define_properties`, naming
//! each key in UTF-8: V8 makes a string of every key and looks it up in its string
//! table, for every object. For `run`'s result (21 keys) that was about a tenth of the
//! JS thread's time per `run('true')` (a `perf` profile; BENCHMARKS.md, twentieth
//! session). A literal's keys are interned once, when its function is compiled, and V8
//! makes each object from the literal's boilerplate with its final hidden class. So a
//! shape compiles `(function (v0, v1, …) { return { "key0": v0, … }; })` once per Node
//! environment and builds each object with one call of it. No library does this.
//!
//! Reading is the same in reverse: napi-rs reads an options object one named property
//! at a time, each name made and looked up anew, and an option not given is a miss
//! searched up the prototype chain (17 of them for `run`'s options, about 11 µs per
//! call). A reader shape compiles `(function (o) { return [o["key0"], …]; })`, whose
//! property loads V8 caches for the object's hidden class.
//!
//! Where the function cannot be made (a host that refuses to compile scripts), the
//! object is made key by key, as napi-rs does: it is the same either way, which
//! `__test__/spawn-fast-paths.test.ts` checks key by key.

use std::cell::RefCell;
use std::ffi::c_void;
use std::ptr;

use napi::{check_status, sys};

/// The keys of one kind of object, in their order, and which way it goes.
pub struct Shape {
    keys: &'static [&'static str],
    reads: bool,
}

/// A shape's function in one environment, or `None` if it could not be made there.
struct Made {
    env: sys::napi_env,
    shape: *const Shape,
    function: Option<sys::napi_ref>,
}

thread_local! {
    // Per JS thread: an environment lives on one thread. Entries of an environment are
    // removed by its cleanup hook, so a later environment at the same address never
    // finds an earlier one's reference.
    static MADE: RefCell<Vec<Made>> = const { RefCell::new(Vec::new()) };
}

impl Shape {
    /// Objects made with these keys (`build`).
    pub const fn new(keys: &'static [&'static str]) -> Self {
        Self { keys, reads: false }
    }

    /// Objects read by these keys (`read`).
    pub const fn reader(keys: &'static [&'static str]) -> Self {
        Self { keys, reads: true }
    }

    /// The values of `object`'s properties named by the shape's keys, in order
    /// (`undefined` for one it lacks), each read once, as a property access in JS
    /// reads it (getters and proxies included). Must run on the JS thread of `env`.
    ///
    /// # Safety
    /// `env` is the live environment of this thread and `object` one of its objects.
    pub unsafe fn read(
        &'static self,
        env: sys::napi_env,
        object: sys::napi_value,
    ) -> napi::Result<Vec<sys::napi_value>> {
        debug_assert!(self.reads, "a builder shape read");
        // SAFETY: as this function's contract says; out-pointers to locals.
        unsafe {
            let Some(function) = self.function(env) else {
                return self.get_each(env, object);
            };
            let array = self.call(env, function, &[object])?;
            let mut values = Vec::with_capacity(self.keys.len());
            for index in 0..self.keys.len() {
                let mut value = ptr::null_mut();
                check_status!(sys::napi_get_element(env, array, index as u32, &mut value))?;
                values.push(value);
            }
            Ok(values)
        }
    }

    /// The same values read key by key, where the function cannot be had.
    unsafe fn get_each(&self, env: sys::napi_env, object: sys::napi_value) -> napi::Result<Vec<sys::napi_value>> {
        // SAFETY: on the JS thread, with out-pointers to locals and NUL-ended keys.
        unsafe {
            let mut values = Vec::with_capacity(self.keys.len());
            for key in self.keys {
                let key = std::ffi::CString::new(*key).map_err(|e| napi::Error::from_reason(e.to_string()))?;
                let mut value = ptr::null_mut();
                check_status!(sys::napi_get_named_property(env, object, key.as_ptr(), &mut value))?;
                values.push(value);
            }
            Ok(values)
        }
    }

    /// The object with `values` under the shape's keys, in order. Must run on the JS
    /// thread of `env`.
    ///
    /// # Safety
    /// `env` is the live environment of this thread and `values` are its values.
    pub unsafe fn build(
        &'static self,
        env: sys::napi_env,
        values: &[sys::napi_value],
    ) -> napi::Result<sys::napi_value> {
        debug_assert!(!self.reads, "a reader shape built");
        if values.len() != self.keys.len() {
            return Err(napi::Error::from_reason("a result's values do not match its keys"));
        }
        // SAFETY: as this function's contract says.
        unsafe {
            match self.function(env) {
                Some(function) => self.call(env, function, values),
                None => self.set_each(env, values),
            }
        }
    }

    /// One call of the shape's function.
    unsafe fn call(
        &self,
        env: sys::napi_env,
        function: sys::napi_ref,
        values: &[sys::napi_value],
    ) -> napi::Result<sys::napi_value> {
        // SAFETY: on the JS thread; the reference is this environment's and alive (its
        // entry is removed at the environment's cleanup); out-pointers to locals.
        unsafe {
            let mut callee = ptr::null_mut();
            let mut receiver = ptr::null_mut();
            let mut object = ptr::null_mut();
            check_status!(sys::napi_get_reference_value(env, function, &mut callee))?;
            check_status!(sys::napi_get_undefined(env, &mut receiver))?;
            check_status!(sys::napi_call_function(
                env,
                receiver,
                callee,
                values.len(),
                values.as_ptr(),
                &mut object
            ))?;
            Ok(object)
        }
    }

    /// The same object made key by key, where the function cannot be had.
    unsafe fn set_each(&self, env: sys::napi_env, values: &[sys::napi_value]) -> napi::Result<sys::napi_value> {
        // SAFETY: on the JS thread, with out-pointers to locals and NUL-ended keys.
        unsafe {
            let mut object = ptr::null_mut();
            check_status!(sys::napi_create_object(env, &mut object))?;
            for (key, value) in self.keys.iter().zip(values) {
                let key = std::ffi::CString::new(*key).map_err(|e| napi::Error::from_reason(e.to_string()))?;
                check_status!(sys::napi_set_named_property(env, object, key.as_ptr(), *value))?;
            }
            Ok(object)
        }
    }

    /// This environment's function of the shape, made at its first use.
    unsafe fn function(&'static self, env: sys::napi_env) -> Option<sys::napi_ref> {
        let me: *const Shape = self;
        if let Some(made) =
            MADE.with_borrow(|made| made.iter().find(|m| m.env == env && m.shape == me).map(|m| m.function))
        {
            return made;
        }
        let first_of_env = MADE.with_borrow(|made| !made.iter().any(|m| m.env == env));
        if first_of_env {
            // SAFETY: registers a hook Node calls on this thread at the environment's
            // teardown, with the environment as its argument.
            let hooked = unsafe { sys::napi_add_env_cleanup_hook(env, Some(forget_env), env.cast()) };
            if hooked != sys::Status::napi_ok {
                // Without the hook a reference could outlive its environment: none is made.
                return None;
            }
        }
        // SAFETY: as `build`'s contract says.
        let function = unsafe { self.compile(env) };
        MADE.with_borrow_mut(|made| {
            made.push(Made {
                env,
                shape: me,
                function,
            })
        });
        function
    }

    /// Compiles the shape's function and keeps it referenced.
    unsafe fn compile(&self, env: sys::napi_env) -> Option<sys::napi_ref> {
        let source = self.source();
        // SAFETY: on the JS thread of `env`, with out-pointers to locals; the source
        // is the shape's own text (its keys are identifiers of this crate).
        unsafe {
            let mut script = ptr::null_mut();
            let mut function = ptr::null_mut();
            let mut reference = ptr::null_mut();
            let ok = sys::napi_create_string_utf8(env, source.as_ptr().cast(), source.len() as isize, &mut script)
                == sys::Status::napi_ok
                && sys::napi_run_script(env, script, &mut function) == sys::Status::napi_ok
                && sys::napi_create_reference(env, function, 1, &mut reference) == sys::Status::napi_ok;
            if !ok {
                // A refused compilation leaves an exception pending: cleared, since the
                // caller goes on another way.
                let mut pending = ptr::null_mut();
                sys::napi_get_and_clear_last_exception(env, &mut pending);
                return None;
            }
            Some(reference)
        }
    }

    /// A builder: `(function (v0, v1) { return { "handle": v0, "pid": v1 }; })`; a
    /// reader: `(function (o) { return [o["cols"], o["rows"]]; })`.
    fn source(&self) -> String {
        if self.reads {
            let loads: Vec<String> = self.keys.iter().map(|key| format!("o[{key:?}]")).collect();
            return format!("(function (o) {{ return [{}]; }})", loads.join(", "));
        }
        let params: Vec<String> = (0..self.keys.len()).map(|i| format!("v{i}")).collect();
        let fields: Vec<String> = self
            .keys
            .iter()
            .enumerate()
            .map(|(i, key)| format!("{key:?}: v{i}"))
            .collect();
        format!(
            "(function ({}) {{ return {{ {} }}; }})",
            params.join(", "),
            fields.join(", ")
        )
    }
}

/// An environment's teardown: its functions' references go with it.
unsafe extern "C" fn forget_env(arg: *mut c_void) {
    let env: sys::napi_env = arg.cast();
    let gone: Vec<Made> = MADE.with_borrow_mut(|made| {
        let (gone, kept) = made.drain(..).partition(|m| m.env == env);
        *made = kept;
        gone
    });
    for made in gone {
        if let Some(reference) = made.function {
            // SAFETY: the environment is still valid in its cleanup hooks, and each
            // reference is deleted once (its entry was just removed).
            unsafe { sys::napi_delete_reference(env, reference) };
        }
    }
}
