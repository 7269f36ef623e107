//! Agents and what belongs to them: caches; ISAs (found by name, their attributes, compatibility, exception
//! policies and rounding) and their wavefront sizes; the regions and memory pools each agent lists
//! (`hsa_agent_iterate_regions`, `hsa_amd_agent_*`; the regions' and pools' own attributes are in memory.rs);
//! and the extensions and exception policies an agent reports. Handles are tagged indices (see runtime.rs).

use std::ffi::{c_char, c_void, CStr};

use super::system::{extension, major_extension};
use super::{iterate, nonnull, out, with};
use crate::ffi::{self, Status};
use crate::info;
use crate::runtime::{AGENT_TAG, CACHE_TAG, ISA_TAG, POOL_TAG, REGION_TAG};

/// An iteration callback: a handle (agent, ISA, cache, region, pool, wavefront) and the caller's data.
type AgentCallback = extern "C" fn(u64, *mut c_void) -> Status;

export! {
    fn hsa_iterate_agents(callback: Option<AgentCallback>, data: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let cb = callback.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            iterate((0..r.agents.len() as u64).map(|i| AGENT_TAG + i), |a| cb(a, data))
        })
    }
    fn hsa_agent_get_info(agent: u64, attribute: u32, value: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let i = r.agent(agent)?;
            // SAFETY: `value` is null or points to storage for the attribute's value, as the API requires.
            unsafe { info::agent(r, i, attribute, value) }
        })
    }
    fn hsa_agent_extension_supported(ext: u16, agent: u64, major: u16, minor: u16, result: *mut bool) -> Status = ffi::ERROR; {
        with(|r| {
            r.agent(agent)?;
            // SAFETY: `result` is null or points to storage for the result, as the API requires.
            unsafe { out(result, extension(ext, major) && minor == 0) }
        })
    }
    fn hsa_agent_major_extension_supported(ext: u16, agent: u64, major: u16, minor: *mut u16, result: *mut bool) -> Status = ffi::ERROR; {
        with(|r| {
            r.agent(agent)?;
            major_extension(ext, major, minor, result)
        })
    }
    fn hsa_agent_get_exception_policies(agent: u64, _profile: u32, mask: *mut u16) -> Status = ffi::ERROR; {
        with(|r| {
            r.agent(agent)?;
            // SAFETY: `mask` is null or points to storage for the result, as the API requires.
            unsafe { out(mask, 0) }
        })
    }
    fn hsa_agent_iterate_isas(agent: u64, callback: Option<AgentCallback>, data: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let cb = callback.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            let i = r.agent(agent)?;
            let isa = r.agents[i].gpu.and_then(|g| r.isas.iter().position(|(d, _)| d.target == g.target));
            iterate(isa.map(|x| ISA_TAG + x as u64), |h| cb(h, data))
        })
    }
    fn hsa_agent_iterate_caches(agent: u64, callback: Option<AgentCallback>, data: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let cb = callback.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            let i = r.agent(agent)?;
            let n = info::caches(r, i).len() as u64;
            iterate((0..n).map(|c| CACHE_TAG + ((i as u64) << 4) + c), |h| cb(h, data))
        })
    }
    fn hsa_agent_iterate_regions(agent: u64, callback: Option<AgentCallback>, data: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let cb = callback.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            let i = r.agent(agent)?;
            let mine: Vec<u64> = r.pools.iter().enumerate().filter(|(_, p)| p.agent == i).map(|(k, _)| REGION_TAG + k as u64).collect();
            iterate(mine, |h| cb(h, data))
        })
    }
    fn hsa_cache_get_info(cache: u64, attribute: u32, value: *mut c_void) -> Status = ffi::ERROR; {
        // SAFETY: `value` is null or points to storage for the attribute's value, as the API requires.
        with(|r| unsafe { info::cache(r, cache, attribute, value) })
    }

    fn hsa_isa_from_name(name: *const c_char, isa: *mut u64) -> Status = ffi::ERROR; {
        with(|r| {
            nonnull(name)?;
            // SAFETY: a NUL-terminated string, as the API requires.
            let n = unsafe { CStr::from_ptr(name) }.to_string_lossy();
            let found = r.isas.iter().position(|(d, full)| *full == n || n == format!("amdgcn-amd-amdhsa--{}", d.gfx) || n.starts_with(&format!("amdgcn-amd-amdhsa--{}:", d.gfx)));
            match found {
                // SAFETY: `isa` is null or points to storage for the result, as the API requires.
                Some(i) => unsafe { out(isa, ISA_TAG + i as u64) },
                None => Err(ffi::ERROR_INVALID_ISA_NAME),
            }
        })
    }
    fn hsa_isa_get_info(isa: u64, attribute: u32, _index: u32, value: *mut c_void) -> Status = ffi::ERROR; {
        // SAFETY: `value` is null or points to storage for the attribute's value, as the API requires.
        with(|r| unsafe { info::isa(r, isa, attribute, value) })
    }
    fn hsa_isa_get_info_alt(isa: u64, attribute: u32, value: *mut c_void) -> Status = ffi::ERROR; {
        hsa_isa_get_info(isa, attribute, 0, value)
    }
    fn hsa_isa_compatible(code: u64, agent_isa: u64, result: *mut bool) -> Status = ffi::ERROR; {
        with(|r| {
            let n = r.isas.len() as u64;
            if code.wrapping_sub(ISA_TAG) >= n || agent_isa.wrapping_sub(ISA_TAG) >= n {
                return Err(ffi::ERROR_INVALID_ISA);
            }
            // SAFETY: `result` is null or points to storage for the result, as the API requires.
            unsafe { out(result, code == agent_isa) }
        })
    }
    fn hsa_isa_get_exception_policies(isa: u64, _profile: u32, mask: *mut u16) -> Status = ffi::ERROR; {
        with(|r| {
            if isa.wrapping_sub(ISA_TAG) >= r.isas.len() as u64 {
                return Err(ffi::ERROR_INVALID_ISA);
            }
            // SAFETY: `mask` is null or points to storage for the result, as the API requires.
            unsafe { out(mask, 0) }
        })
    }
    fn hsa_isa_get_round_method(isa: u64, _fp: u32, _flush: u32, method: *mut u32) -> Status = ffi::ERROR; {
        with(|r| {
            if isa.wrapping_sub(ISA_TAG) >= r.isas.len() as u64 {
                return Err(ffi::ERROR_INVALID_ISA);
            }
            // SAFETY: `method` is null or points to storage for the result, as the API requires.
            unsafe { out(method, 1) }
        })
    }
    fn hsa_isa_iterate_wavefronts(isa: u64, callback: Option<AgentCallback>, data: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let cb = callback.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            let (d, _) = r.isas.get(isa.wrapping_sub(ISA_TAG) as usize).ok_or(ffi::ERROR_INVALID_ISA)?;
            iterate([d.wave_size as u64], |w| cb(w, data))
        })
    }
    fn hsa_wavefront_get_info(wavefront: u64, attribute: u32, value: *mut c_void) -> Status = ffi::ERROR; {
        with(|_| match (wavefront, attribute) {
            // SAFETY: `value` is null or points to storage for the result, as the API requires.
            (32 | 64, 0) => unsafe { out(value.cast::<u32>(), wavefront as u32) },
            (32 | 64, _) => Err(ffi::ERROR_INVALID_ARGUMENT),
            _ => Err(ffi::ERROR_INVALID_WAVEFRONT),
        })
    }
    fn hsa_amd_agent_iterate_memory_pools(agent: u64, callback: Option<AgentCallback>, data: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let cb = callback.ok_or(ffi::ERROR_INVALID_ARGUMENT)?;
            let i = r.agent(agent)?;
            let mine: Vec<u64> = r.pools.iter().enumerate().filter(|(_, p)| p.agent == i).map(|(k, _)| POOL_TAG + k as u64).collect();
            iterate(mine, |h| cb(h, data))
        })
    }
    fn hsa_amd_agent_memory_pool_get_info(agent: u64, pool: u64, attribute: u32, value: *mut c_void) -> Status = ffi::ERROR; {
        with(|r| {
            let a = r.agent(agent)?;
            let p = r.pool(pool, POOL_TAG)?;
            // SAFETY: `value` is null or points to storage for the attribute's value, as the API requires.
            unsafe { info::agent_pool(r, a, p, attribute, value) }
        })
    }
}
