//! Buffer windows handed from wave to wave: the windows of a wave that ended, kept for the next wave the
//! thread starts, so each access site's first access need not take the checked path again.

use emu_core::memory::DeviceMemory;
use emu_core::wave::{BufferWindow, WaveState, Windows};

/// A window table left by a wave that ended, without its private windows, and the version of the memory it
/// was found in ([`DeviceMemory::version`]).
struct Bequest {
    memory: (u64, u64),
    windows: Windows,
    /// Every slot holds a window (a later wave's windows at the same version replace them until then).
    full: bool,
}

thread_local! {
    /// The windows of the last wave that ended on this thread.
    static BEQUEATHED: std::cell::RefCell<Option<Box<Bequest>>> = const { std::cell::RefCell::new(None) };
}

/// Keeps the windows of `wave`, which ended, for the next wave this thread starts with none of its own (see
/// [`start_windows`]): a grid's waves mostly access the same buffers at the same sites, and each site's first
/// access would otherwise take the interpreter's checked path again. The wave's own private segment is left out
/// (it is no other wave's). A wave leaves its windows unless a wave that ended before it at the same memory
/// version left windows in every slot.
pub(super) fn bequeath_windows(mem: &DeviceMemory, wave: &WaveState) {
    if !wave.windows_found {
        // nothing it did not start with
        return;
    }
    if mem.version() != wave.windows_version {
        // an allocation changed while the wave ran: a window it found may lie in memory that is gone
        return;
    }
    BEQUEATHED.with_borrow_mut(|b| {
        if b.as_ref().is_some_and(|b| b.memory == wave.windows_version && b.full) {
            return;
        }
        let b = b.get_or_insert_with(|| {
            Box::new(Bequest {
                memory: (0, 0),
                windows: Windows::default(),
                full: false,
            })
        });
        b.memory = wave.windows_version;
        let Some(from) = wave.windows.as_deref() else { return };
        let to = &mut b.windows;
        let mut full = true;
        for (to, from) in to
            .vector
            .iter_mut()
            .zip(&from.vector)
            .chain(to.scalar.iter_mut().zip(&from.scalar))
        {
            *to = if wave.touches_private(from.start, from.start + from.len) {
                BufferWindow::default()
            } else {
                *from
            };
            full &= to.len != 0;
        }
        b.full = full;
    });
}

/// The windows `wave` (which has executed nothing) starts with: its own when they were found at the memory's
/// present version (a state made over from a wave of an earlier workgroup, [`WaveState::reset`], or given the
/// registers and windows of a wave that ended, `engine::give_registers`), else those the
/// first wave to end on this thread at that version left, else none. Either way every window still lies in
/// live memory of a kind compiled code may access, and where the new wave's lanes fall is checked, as always.
pub(super) fn start_windows(mem: &DeviceMemory, wave: &mut WaveState) {
    let now = mem.version();
    if wave.windows_version == now {
        return;
    }
    wave.windows_version = now;
    BEQUEATHED.with_borrow(|b| match b.as_ref().filter(|b| b.memory == now) {
        Some(b) => *wave.windows_mut() = b.windows,
        None => wave.windows = None,
    });
}
