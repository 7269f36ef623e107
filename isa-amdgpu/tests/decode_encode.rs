//! Decoder robustness and the encoder: any bytes decode to an instruction or a clear error (never a panic),
//! and every decoded instruction rebuilt field by field through `InstBuilder` gives back the same bytes.

use isa_amdgpu::encoding::{Encoding, Field};
use isa_amdgpu::inst::{Form, InstBuilder};
use isa_amdgpu::table::{rows_of, Lookup};
use isa_amdgpu::{decode, disasm, DecodeError, Inst, Opcode, Target, GFX9};
use proptest::prelude::*;

/// Rebuilds `inst` from its field values only.
fn rebuild(inst: &Inst) -> Vec<u8> {
    let mut b: InstBuilder = Inst::build(inst.info, inst.target).unwrap();
    for d in inst.encoding().layout() {
        if d.field == Field::Op {
            continue;
        }
        b = b.set(d.field, inst.field(d.field)).unwrap();
    }
    if let Some(e) = inst.ext() {
        b = b.ext(inst.form, e);
    }
    if let Some(l) = inst.literal() {
        b = b.literal(l);
    }
    b.encode().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 20_000, ..ProptestConfig::default() })]

    #[test]
    fn random_words_decode_or_fail_cleanly_and_rebuild_exactly(w0 in any::<u32>(), w1 in any::<u32>(), w2 in any::<u32>(), t in 0usize..3) {
        let target = Target::ALL[t];
        let bytes: Vec<u8> = [w0, w1, w2].iter().flat_map(|w| w.to_le_bytes()).collect();
        match decode(&bytes, 0x1000, target) {
            Ok(inst) => {
                prop_assert!(inst.size() >= 4 && inst.size() <= 12);
                prop_assert_eq!(&inst.to_bytes()[..], &bytes[..inst.size()]);
                prop_assert_eq!(rebuild(&inst), bytes[..inst.size()].to_vec());
                let text = disasm::text(&inst);
                prop_assert!(text.starts_with(inst.info.name.trim_end_matches("_e32")), "{}", text);
            }
            Err(DecodeError::Invalid { address, words, .. }) => {
                prop_assert_eq!(address, 0x1000);
                prop_assert_eq!(words[0], w0);
            }
            Err(e) => prop_assert!(false, "unexpected error {e}"),
        }
    }

    #[test]
    fn truncated_input_is_an_error_not_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..8)) {
        for t in Target::ALL {
            if let Ok(i) = decode(&bytes, 0, t) {
                prop_assert!(i.size() <= bytes.len());
            }
        }
    }
}

#[test]
fn every_table_row_encodes_and_decodes_to_itself() {
    let mut n = 0;
    for row in GFX9 {
        for t in Target::ALL.into_iter().filter(|t| row.on(*t)) {
            let mut b = Inst::build(row, t).unwrap();
            // the row's fixed bits, as LLVM requires them
            for d in row.encoding.layout() {
                let (m, v) = row.fixed[d.dword as usize];
                let fm = (m & d.mask()) >> d.lo;
                if fm != 0 {
                    b = b.set(d.field, (v & d.mask()) >> d.lo).unwrap();
                }
            }
            if row.flags.contains(isa_amdgpu::table::OpFlags::LITERAL) {
                b = b.literal(0x1234_5678);
            }
            let bytes = b
                .encode()
                .unwrap_or_else(|e| panic!("{} on {}: {e}", row.name, t.name()));
            let inst = decode(&bytes, 0, t).unwrap();
            assert!(
                std::ptr::eq(inst.info, row),
                "{} decoded as {}",
                row.name,
                inst.info.name
            );
            assert_eq!(inst.form, Form::Plain);
            n += 1;
        }
    }
    assert!(n > 2500, "{n} rows");
}

#[test]
fn unknown_opcodes_and_prefixes_give_errors_with_address_and_words() {
    // 0xFFFFFFFF has no encoding prefix on gfx9
    let e = decode(&0xFFFF_FFFFu32.to_le_bytes(), 0x1900, Target::Gfx90a).unwrap_err();
    assert_eq!(e.address(), 0x1900);
    assert!(e.to_string().contains("FFFFFFFF"), "{e}");
    // a truncated 64-bit instruction
    let e = decode(&0xD1C1_0000u32.to_le_bytes(), 0x20, Target::Gfx90a).unwrap_err();
    assert!(matches!(e, DecodeError::Truncated { need: 8, have: 4, .. }), "{e}");
}

#[test]
fn table_knows_targets_units_and_implicit_registers() {
    let lookup = Lookup::get();
    // v_mac_f32 exists on gfx90a only; gfx942 reuses its VOP2 opcode number for nothing
    let mac = rows_of(Opcode::VMacF32, Target::Gfx90a).next().unwrap();
    assert_eq!(mac.encoding, Encoding::Vop2);
    assert!(lookup.find(Target::Gfx942, Encoding::Vop2, mac.op as u32).is_none());
    // s_add_u32 writes SCC; s_addc_u32 reads it; v_cmp e32 writes VCC; SMEM waits on lgkmcnt
    use isa_amdgpu::table::{Implicit, Unit, WaitClass};
    assert!(rows_of(Opcode::SAddU32, Target::Gfx90a)
        .next()
        .unwrap()
        .writes
        .contains(Implicit::SCC));
    assert!(rows_of(Opcode::SAddcU32, Target::Gfx90a)
        .next()
        .unwrap()
        .reads
        .contains(Implicit::SCC));
    let cmp = rows_of(Opcode::VCmpEqF32, Target::Gfx942)
        .find(|r| r.encoding == Encoding::Vopc)
        .unwrap();
    assert!(cmp.writes.contains(Implicit::VCC));
    let load = rows_of(Opcode::SLoadDwordx2, Target::Gfx942).next().unwrap();
    assert_eq!((load.unit, load.wait), (Unit::Smem, WaitClass::Lgkm));
    let mfma = rows_of(Opcode::VMfmaF3232x32x8f16, Target::Gfx90a).next().unwrap();
    assert_eq!(mfma.unit, Unit::Mfma);
}
