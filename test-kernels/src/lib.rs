//! Bundled test kernels: sources (OpenCL C, later HIP and assembly) under `src/kernels/`, their code objects
//! for gfx90a and gfx942 under `prebuilt/` (rebuilt with clang-19 by `build.sh`, checked in so that building
//! wavejit needs no compiler), embedded here so tools and tests can use them with nothing installed.
//! CPU references arrive with the engine (issue 3).

/// A prebuilt code object: (file name, bytes).
pub type Prebuilt = (&'static str, &'static [u8]);

macro_rules! prebuilt {
    ($($name:literal),* $(,)?) => {
        /// Every prebuilt code object, gfx90a and gfx942.
        pub const ALL: &[Prebuilt] = &[$(($name, include_bytes!(concat!("../prebuilt/", $name)))),*];
    };
}

prebuilt!(
    "vadd-gfx90a.co",
    "vadd-gfx942.co",
    "saxpy-gfx90a.co",
    "saxpy-gfx942.co",
    "reduce-gfx90a.co",
    "reduce-gfx942.co",
    "divergence-gfx90a.co",
    "divergence-gfx942.co",
    "mfma-gfx90a.co",
    "mfma-gfx942.co",
    "alu_loop-gfx90a.co",
    "alu_loop-gfx942.co",
);

/// The default sample: the LDS reduction for an MI300X (gfx942).
pub const SAMPLE: Prebuilt = ALL[5];

/// The prebuilt code object named `name` (e.g. `vadd-gfx90a.co`).
pub fn by_name(name: &str) -> Option<&'static [u8]> {
    ALL.iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
}

/// Directory of the kernel sources (for tests that rebuild or inspect them).
pub fn source_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/kernels")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_prebuilt_code_object_is_an_amdgpu_elf() {
        assert_eq!(ALL.len(), 12);
        for (name, bytes) in ALL {
            assert_eq!(&bytes[..4], b"\x7fELF", "{name}");
            assert_eq!(u16::from_le_bytes([bytes[18], bytes[19]]), 224, "{name}: e_machine must be EM_AMDGPU");
        }
        assert_eq!(SAMPLE.0, "reduce-gfx942.co");
    }
}
