//! The kernel argument segment: user arguments at the offsets the metadata gives, and the hidden arguments
//! of code object v4/v5 filled from the dispatch.

use isa_amdgpu::codeobj::KernelMetadata;

use crate::dispatch::DispatchShape;

/// A user argument value, as given on the command line or by a runtime.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ArgValue {
    /// 8- and 16-bit values (`char`, `short`, `_Float16`'s bits, Triton's `i8`, `i16`, `fp16`, `bf16`).
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    U64(u64),
    I64(i64),
    F32(f32),
    F64(f64),
    /// A device address (buffers).
    Pointer(u64),
}

impl ArgValue {
    fn bytes(&self) -> Vec<u8> {
        match *self {
            ArgValue::U8(v) => v.to_le_bytes().to_vec(),
            ArgValue::I8(v) => v.to_le_bytes().to_vec(),
            ArgValue::U16(v) => v.to_le_bytes().to_vec(),
            ArgValue::I16(v) => v.to_le_bytes().to_vec(),
            ArgValue::U32(v) => v.to_le_bytes().to_vec(),
            ArgValue::I32(v) => v.to_le_bytes().to_vec(),
            ArgValue::U64(v) | ArgValue::Pointer(v) => v.to_le_bytes().to_vec(),
            ArgValue::I64(v) => v.to_le_bytes().to_vec(),
            ArgValue::F32(v) => v.to_le_bytes().to_vec(),
            ArgValue::F64(v) => v.to_le_bytes().to_vec(),
        }
    }
}

/// Why the kernarg segment could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KernargError {
    #[error("kernel {kernel} takes {want} arguments, {got} given")]
    Count { kernel: String, want: usize, got: usize },
    #[error("kernel {kernel} argument {index} ({name}): {size}-byte slot, {given:?} does not fit")]
    Size {
        kernel: String,
        index: usize,
        name: String,
        size: u64,
        given: ArgValue,
    },
    #[error(
        "kernel {kernel} argument {index} ({name}) at offset {offset} + {size} lies past the {segment}-byte segment"
    )]
    Layout {
        kernel: String,
        index: usize,
        name: String,
        offset: u64,
        size: u64,
        segment: u64,
    },
}

/// Values the runtime provides for hidden arguments it knows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HiddenValues {
    pub global_offset: [u64; 3],
    pub printf_buffer: u64,
    pub hostcall_buffer: u64,
    pub heap: u64,
    pub queue_ptr: u64,
    pub dynamic_lds_size: u32,
    pub private_base: u32,
    pub shared_base: u32,
}

/// Builds the kernarg segment for `meta`'s kernel: `user` holds the non-hidden arguments in order.
pub fn build_kernarg(
    meta: &KernelMetadata,
    user: &[ArgValue],
    shape: &DispatchShape,
    hidden: &HiddenValues,
) -> Result<Vec<u8>, KernargError> {
    let kernel = meta.name.clone();
    let visible: Vec<_> = meta
        .args
        .iter()
        .filter(|a| !a.value_kind.starts_with("hidden_"))
        .collect();
    if visible.len() != user.len() {
        return Err(KernargError::Count {
            kernel,
            want: visible.len(),
            got: user.len(),
        });
    }
    let segment = meta
        .kernarg_segment_size
        .unwrap_or_else(|| meta.args.iter().map(|a| a.offset + a.size).max().unwrap_or(0));
    let mut buf = vec![0u8; segment as usize];
    let mut next_user = user.iter();
    let wgs = shape.workgroups();
    let rem = shape.remainder();
    for (index, a) in meta.args.iter().enumerate() {
        let name = a.name.clone().unwrap_or_else(|| format!("#{index}"));
        if a.offset + a.size > segment {
            return Err(KernargError::Layout {
                kernel,
                index,
                name,
                offset: a.offset,
                size: a.size,
                segment,
            });
        }
        let bytes: Vec<u8> = match a.value_kind.as_str() {
            k if !k.starts_with("hidden_") => {
                let v = *next_user.next().expect("counted above");
                let b = v.bytes();
                if b.len() as u64 > a.size {
                    return Err(KernargError::Size {
                        kernel,
                        index,
                        name,
                        size: a.size,
                        given: v,
                    });
                }
                b
            }
            "hidden_block_count_x" => wgs[0].to_le_bytes().to_vec(),
            "hidden_block_count_y" => wgs[1].to_le_bytes().to_vec(),
            "hidden_block_count_z" => wgs[2].to_le_bytes().to_vec(),
            "hidden_group_size_x" => (shape.block[0] as u16).to_le_bytes().to_vec(),
            "hidden_group_size_y" => (shape.block[1] as u16).to_le_bytes().to_vec(),
            "hidden_group_size_z" => (shape.block[2] as u16).to_le_bytes().to_vec(),
            "hidden_remainder_x" => (rem[0] as u16).to_le_bytes().to_vec(),
            "hidden_remainder_y" => (rem[1] as u16).to_le_bytes().to_vec(),
            "hidden_remainder_z" => (rem[2] as u16).to_le_bytes().to_vec(),
            "hidden_global_offset_x" => hidden.global_offset[0].to_le_bytes().to_vec(),
            "hidden_global_offset_y" => hidden.global_offset[1].to_le_bytes().to_vec(),
            "hidden_global_offset_z" => hidden.global_offset[2].to_le_bytes().to_vec(),
            "hidden_grid_dims" => {
                let dims = if shape.grid[2] > 1 {
                    3u16
                } else if shape.grid[1] > 1 {
                    2
                } else {
                    1
                };
                dims.to_le_bytes().to_vec()
            }
            "hidden_printf_buffer" => hidden.printf_buffer.to_le_bytes().to_vec(),
            "hidden_hostcall_buffer" => hidden.hostcall_buffer.to_le_bytes().to_vec(),
            "hidden_heap_v1" => hidden.heap.to_le_bytes().to_vec(),
            "hidden_queue_ptr" => hidden.queue_ptr.to_le_bytes().to_vec(),
            "hidden_dynamic_lds_size" => hidden.dynamic_lds_size.to_le_bytes().to_vec(),
            "hidden_private_base" => hidden.private_base.to_le_bytes().to_vec(),
            "hidden_shared_base" => hidden.shared_base.to_le_bytes().to_vec(),
            // hidden_none, hidden_multigrid_sync_arg, hidden_default_queue, hidden_completion_action: no such
            // object in an emulated dispatch; they read as zero (null)
            _ => Vec::new(),
        };
        let n = bytes.len().min(a.size as usize);
        buf[a.offset as usize..a.offset as usize + n].copy_from_slice(&bytes[..n]);
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use isa_amdgpu::codeobj::KernelArg;

    #[test]
    fn one_and_two_byte_values_fill_their_slots_and_do_not_fit_smaller_ones() {
        let slot = |offset, size| KernelArg {
            offset,
            size,
            value_kind: "by_value".into(),
            ..KernelArg::default()
        };
        let meta = KernelMetadata {
            name: "k".into(),
            args: vec![slot(0, 1), slot(1, 1), slot(2, 2), slot(4, 2), slot(6, 1)],
            kernarg_segment_size: Some(8),
            ..KernelMetadata::default()
        };
        let shape = DispatchShape {
            grid: [64, 1, 1],
            block: [64, 1, 1],
        };
        let args = [
            ArgValue::U8(0xab),
            ArgValue::I8(-2),
            ArgValue::U16(0x3c00),
            ArgValue::I16(-3),
            ArgValue::U8(7),
        ];
        let seg = build_kernarg(&meta, &args, &shape, &HiddenValues::default()).unwrap();
        assert_eq!(seg, [0xab, 0xfe, 0x00, 0x3c, 0xfd, 0xff, 7, 0]);
        let wide = [args[0], args[1], args[2], args[3], ArgValue::U16(7)];
        let e = build_kernarg(&meta, &wide, &shape, &HiddenValues::default()).unwrap_err();
        assert!(matches!(e, KernargError::Size { index: 4, size: 1, .. }), "{e}");
    }
}
