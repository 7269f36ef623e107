//! Fuzz target: the code-object reader, offload-bundle parser, container detection and metadata decoder must
//! return errors, never panic, on any input.
#![no_main]

use std::path::Path;

use isa_amdgpu::codeobj::{self, bundle, metadata::Metadata, CodeObject, SharedBytes};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(co) = CodeObject::parse(data, "fuzz") {
        for f in &co.functions {
            let _ = co.symbolize(f.address.wrapping_add(f.size / 2));
        }
        for k in &co.kernels {
            let _ = co.kernel_metadata(k);
            let _ = (k.descriptor.vgpr_alloc_count(), k.descriptor.user_sgprs());
        }
        let _ = co.text_bytes();
    }
    if let Ok(bundles) = bundle::parse_bundles(data, "fuzz") {
        for e in bundles.iter().flat_map(|b| &b.entries) {
            let _ = e.bytes(data);
        }
    }
    let shared = SharedBytes::copy_from_slice(data);
    let _ = codeobj::open_bytes(&shared, Path::new("fuzz"), None);
    let _ = Metadata::from_msgpack(data);
});
