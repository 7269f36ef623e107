//! How `wavejit` asks the host for its memory: glibc's malloc backing the heap with transparent huge pages.
//!
//! The timing model visits the state of thousands of resident waves in turn: each wave's timing record, its
//! queue of executed instructions and its outstanding completions, small allocations spread over the heap. On
//! an MI300X, whose 9,728 wave slots a streaming kernel fills, they span tens of thousands of 4 KiB pages,
//! more than the host's address-translation cache holds: with the heap on 2 MiB pages, `wavejit bench
//! --timing` ran the streaming kernel about 13% faster on the MI300X preset and 6% on the MI210
//! (docs/timing.md, Speed).
//!
//! glibc does this when `GLIBC_TUNABLES` holds `glibc.malloc.hugetlb=1` (it advises the heap with
//! `MADV_HUGEPAGE` and grows it by whole huge pages), a setting it reads only as a program starts. So
//! `wavejit` starts itself once more with that setting added, before doing anything else; programs it runs
//! (`wavejit exec`) inherit it. With `WAVEJIT_HUGE_PAGES` set (to 0, say) it leaves the environment as it
//! is; a `GLIBC_TUNABLES` that already names `glibc.malloc.hugetlb` is kept unchanged; under valgrind it
//! stays as it is. On a host whose kernel has transparent huge pages off, glibc uses ordinary pages: nothing
//! else changes, and no result ever depends on it.

use std::ffi::OsString;

/// The environment variable that says whether `wavejit` asks for a huge-page heap (and, once set, that it has).
const SWITCH: &str = "WAVEJIT_HUGE_PAGES";
const TUNABLE: &str = "glibc.malloc.hugetlb";

/// Runs this program again with the huge-page heap setting in its environment, unless it is there already or
/// the user said otherwise; returns only when it does not (or when starting again fails, which leaves the
/// program running as it is).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn restart_with_huge_page_heap() {
    use std::os::unix::process::CommandExt;
    if std::env::var_os(SWITCH).is_some() || under_valgrind() {
        return;
    }
    let Some(tunables) = tunables_with_huge_pages(std::env::var_os("GLIBC_TUNABLES")) else {
        return;
    };
    let mut args = std::env::args_os();
    let arg0 = args.next().unwrap_or_else(|| OsString::from("wavejit"));
    // `exec` returns only on failure (no /proc, say): then this process simply goes on
    let _ = std::process::Command::new("/proc/self/exe")
        .arg0(arg0)
        .args(args)
        .env(SWITCH, "1")
        .env("GLIBC_TUNABLES", tunables)
        .exec();
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn restart_with_huge_page_heap() {}

/// Valgrind runs a program it starts again natively unless told to trace children, which would take the
/// program out from under the tool: under it, `wavejit` stays as it is. Valgrind preloads its core into the
/// programs it runs.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn under_valgrind() -> bool {
    std::env::var_os("LD_PRELOAD").is_some_and(|p| p.to_string_lossy().contains("vgpreload"))
}

/// `GLIBC_TUNABLES` with the huge-page heap added, or `None` when it names that tunable already (the user's
/// choice stands).
fn tunables_with_huge_pages(current: Option<OsString>) -> Option<OsString> {
    let setting = format!("{TUNABLE}=1");
    match current {
        Some(c)
            if c.to_string_lossy()
                .split(':')
                .any(|t| t.split('=').next() == Some(TUNABLE)) =>
        {
            None
        }
        Some(c) if !c.is_empty() => {
            let mut v = c;
            v.push(":");
            v.push(setting);
            Some(v)
        }
        _ => Some(OsString::from(setting)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_huge_page_setting_is_added_to_what_the_user_set_and_never_replaces_their_own() {
        assert_eq!(
            tunables_with_huge_pages(None),
            Some(OsString::from("glibc.malloc.hugetlb=1"))
        );
        assert_eq!(
            tunables_with_huge_pages(Some(OsString::new())),
            Some(OsString::from("glibc.malloc.hugetlb=1"))
        );
        assert_eq!(
            tunables_with_huge_pages(Some(OsString::from("glibc.malloc.arena_max=2"))),
            Some(OsString::from("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1"))
        );
        assert_eq!(
            tunables_with_huge_pages(Some(OsString::from("glibc.malloc.hugetlb=0"))),
            None
        );
        assert_eq!(
            tunables_with_huge_pages(Some(OsString::from("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=2"))),
            None
        );
    }
}
