//! Interrupts kernels raise: `s_sendmsg sendmsg(MSG_INTERRUPT)` hands the interrupt handler a context id from
//! M0 (bits 0–23). On a GPU the kernel driver receives it; ROCm's device code raises one after storing to a
//! signal that has an event mailbox (`__ockl_hsa_signal_store`, which HIP's hostcall and device `printf` use), so
//! that a host thread sleeping on the event wakes. Whoever emulates the driver in this process installs the
//! handler ([`set_handler`]); without one an interrupt goes nowhere, as on a GPU whose driver ignores it.

use std::sync::OnceLock;

static HANDLER: OnceLock<fn(u32)> = OnceLock::new();

/// Installs the process's interrupt handler (the first one installed stays).
pub fn set_handler(f: fn(u32)) {
    let _ = HANDLER.set(f);
}

/// Raises an interrupt with context id `ctxid`.
pub fn raise(ctxid: u32) {
    if let Some(f) = HANDLER.get() {
        f(ctxid & 0xff_ffff);
    }
}
