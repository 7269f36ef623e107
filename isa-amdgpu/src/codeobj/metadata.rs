//! The `NT_AMDGPU_METADATA` note (owner `AMDGPU`, type 32): a MessagePack map with `amdhsa.version`,
//! `amdhsa.target`, `amdhsa.printf` and `amdhsa.kernels`, decoded to typed structs. Keys this reader does not
//! model are kept, converted to JSON values, in each struct's `extra` map.

use std::collections::BTreeMap;

use rmpv::Value;
use serde::Serialize;
use serde_json::Value as Json;

/// Note type of the code object v3+ metadata note.
pub const NT_AMDGPU_METADATA: u32 = 32;
/// Note owner of the code object v3+ metadata note.
pub const NOTE_OWNER_AMDGPU: &[u8] = b"AMDGPU";

/// Maximum nesting of MessagePack containers accepted (real metadata nests four deep).
const MAX_DEPTH: usize = 32;

/// The whole metadata document.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Metadata {
    /// `amdhsa.version`: `[major, minor]` (`[1, 1]` = v4, `[1, 2]` = v5).
    pub version: Vec<u64>,
    /// `amdhsa.target`: `amdgcn-amd-amdhsa--<target id>`.
    pub target: Option<String>,
    /// `amdhsa.printf`: printf format descriptors.
    pub printf: Vec<String>,
    /// `amdhsa.kernels`.
    pub kernels: Vec<KernelMetadata>,
    /// Other top-level keys.
    pub extra: BTreeMap<String, Json>,
}

impl Metadata {
    /// The target id part of `amdhsa.target` (after the `--`), if present.
    pub fn target_id(&self) -> Option<&str> {
        let t = self.target.as_deref()?;
        Some(t.rfind("--").and_then(|i| t.get(i + 2..)).unwrap_or(t))
    }

    /// The kernel whose `.symbol` is `symbol` (e.g. `vadd.kd`).
    pub fn kernel_by_symbol(&self, symbol: &str) -> Option<&KernelMetadata> {
        self.kernels.iter().find(|k| k.symbol == symbol)
    }
}

/// One entry of `amdhsa.kernels`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct KernelMetadata {
    /// `.name`: source name.
    pub name: String,
    /// `.symbol`: the kernel descriptor symbol (`NAME.kd`).
    pub symbol: String,
    /// `.language` (`OpenCL C`, `HIP`).
    pub language: Option<String>,
    /// `.language_version`.
    pub language_version: Vec<u64>,
    /// `.args`.
    pub args: Vec<KernelArg>,
    /// `.reqd_workgroup_size`.
    pub reqd_workgroup_size: Vec<u64>,
    /// `.workgroup_size_hint`.
    pub workgroup_size_hint: Vec<u64>,
    /// `.vec_type_hint`.
    pub vec_type_hint: Option<String>,
    /// `.device_enqueue_symbol`.
    pub device_enqueue_symbol: Option<String>,
    /// `.kernarg_segment_size`.
    pub kernarg_segment_size: Option<u64>,
    /// `.kernarg_segment_align`.
    pub kernarg_segment_align: Option<u64>,
    /// `.group_segment_fixed_size`.
    pub group_segment_fixed_size: Option<u64>,
    /// `.private_segment_fixed_size`.
    pub private_segment_fixed_size: Option<u64>,
    /// `.wavefront_size`.
    pub wavefront_size: Option<u64>,
    /// `.sgpr_count`.
    pub sgpr_count: Option<u64>,
    /// `.vgpr_count` (ArchVGPRs).
    pub vgpr_count: Option<u64>,
    /// `.agpr_count`.
    pub agpr_count: Option<u64>,
    /// `.max_flat_workgroup_size`.
    pub max_flat_workgroup_size: Option<u64>,
    /// `.sgpr_spill_count`.
    pub sgpr_spill_count: Option<u64>,
    /// `.vgpr_spill_count`.
    pub vgpr_spill_count: Option<u64>,
    /// `.kind` (`normal`, `init`, `fini`).
    pub kind: Option<String>,
    /// `.uses_dynamic_stack`.
    pub uses_dynamic_stack: Option<bool>,
    /// `.workgroup_processor_mode`.
    pub workgroup_processor_mode: Option<bool>,
    /// `.uniform_work_group_size`.
    pub uniform_work_group_size: Option<bool>,
    /// Other keys.
    pub extra: BTreeMap<String, Json>,
}

/// One entry of a kernel's `.args`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct KernelArg {
    /// `.name`.
    pub name: Option<String>,
    /// `.type_name`.
    pub type_name: Option<String>,
    /// `.size` in bytes.
    pub size: u64,
    /// `.offset` in the kernarg segment.
    pub offset: u64,
    /// `.value_kind` (`by_value`, `global_buffer`, `hidden_block_count_x`, …).
    pub value_kind: String,
    /// `.value_type` (v3/v4 only).
    pub value_type: Option<String>,
    /// `.pointee_align`.
    pub pointee_align: Option<u64>,
    /// `.address_space` (`global`, `local`, …).
    pub address_space: Option<String>,
    /// `.access`.
    pub access: Option<String>,
    /// `.actual_access`.
    pub actual_access: Option<String>,
    /// `.is_const`.
    pub is_const: bool,
    /// `.is_restrict`.
    pub is_restrict: bool,
    /// `.is_volatile`.
    pub is_volatile: bool,
    /// `.is_pipe`.
    pub is_pipe: bool,
    /// Other keys.
    pub extra: BTreeMap<String, Json>,
}

/// Converts a MessagePack value to JSON (binary → array of bytes, non-string map keys → their JSON text,
/// non-finite floats → null, ext → `{"ext_type": t, "data": [...]}`).
pub fn msgpack_to_json(v: &Value) -> Json {
    match v {
        Value::Nil => Json::Null,
        Value::Boolean(b) => Json::Bool(*b),
        Value::Integer(i) => match (i.as_u64(), i.as_i64()) {
            (Some(u), _) => Json::from(u),
            (None, Some(s)) => Json::from(s),
            _ => Json::Null,
        },
        Value::F32(f) => serde_json::Number::from_f64(f64::from(*f)).map_or(Json::Null, Json::Number),
        Value::F64(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
        Value::String(s) => Json::String(match s.as_str() {
            Some(s) => s.to_string(),
            None => String::from_utf8_lossy(s.as_bytes()).into_owned(),
        }),
        Value::Binary(b) => Json::Array(b.iter().map(|&x| Json::from(x)).collect()),
        Value::Array(a) => Json::Array(a.iter().map(msgpack_to_json).collect()),
        Value::Map(m) => Json::Object(m.iter().map(|(k, v)| (key_string(k), msgpack_to_json(v))).collect()),
        Value::Ext(t, data) => serde_json::json!({ "ext_type": t, "data": data }),
    }
}

fn key_string(k: &Value) -> String {
    match k {
        Value::String(s) => match s.as_str() {
            Some(s) => s.to_string(),
            None => String::from_utf8_lossy(s.as_bytes()).into_owned(),
        },
        other => msgpack_to_json(other).to_string(),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Nil => "nil",
        Value::Boolean(_) => "boolean",
        Value::Integer(_) => "integer",
        Value::F32(_) | Value::F64(_) => "float",
        Value::String(_) => "string",
        Value::Binary(_) => "binary",
        Value::Array(_) => "array",
        Value::Map(_) => "map",
        Value::Ext(..) => "ext",
    }
}

/// Context for error messages: where in the document a value sits.
struct Path<'a> {
    text: &'a str,
}

fn expected(path: &Path<'_>, key: &str, what: &str, v: &Value) -> String {
    format!("{}{key}: expected {what}, found {}", path.text, type_name(v))
}

fn as_str(path: &Path<'_>, key: &str, v: &Value) -> Result<String, String> {
    match v {
        Value::String(s) => Ok(match s.as_str() {
            Some(s) => s.to_string(),
            None => String::from_utf8_lossy(s.as_bytes()).into_owned(),
        }),
        _ => Err(expected(path, key, "string", v)),
    }
}

fn as_u64(path: &Path<'_>, key: &str, v: &Value) -> Result<u64, String> {
    match v {
        Value::Integer(i) => i
            .as_u64()
            .ok_or_else(|| format!("{}{key}: negative integer {i}", path.text)),
        _ => Err(expected(path, key, "unsigned integer", v)),
    }
}

fn as_bool(path: &Path<'_>, key: &str, v: &Value) -> Result<bool, String> {
    match v {
        Value::Boolean(b) => Ok(*b),
        // Some producers write 0/1.
        Value::Integer(i) => Ok(i.as_u64().unwrap_or(1) != 0),
        _ => Err(expected(path, key, "boolean", v)),
    }
}

fn as_u64_list(path: &Path<'_>, key: &str, v: &Value) -> Result<Vec<u64>, String> {
    match v {
        Value::Array(a) => a.iter().map(|x| as_u64(path, key, x)).collect(),
        _ => Err(expected(path, key, "array of integers", v)),
    }
}

fn as_map<'v>(path: &Path<'_>, key: &str, v: &'v Value) -> Result<&'v [(Value, Value)], String> {
    match v {
        Value::Map(m) => Ok(m),
        _ => Err(expected(path, key, "map", v)),
    }
}

impl Metadata {
    /// Decodes the note descriptor (MessagePack). Errors are messages such as
    /// `"expected map, found array"` or `"amdhsa.kernels[3] (vadd) .sgpr_count: expected unsigned integer, found string"`.
    pub fn from_msgpack(desc: &[u8]) -> Result<Metadata, String> {
        let mut rd = desc;
        let root = rmpv::decode::read_value_with_max_depth(&mut rd, MAX_DEPTH)
            .map_err(|e| format!("invalid MessagePack: {e}"))?;
        Metadata::from_value(&root)
    }

    /// Decodes an already parsed MessagePack value.
    pub fn from_value(root: &Value) -> Result<Metadata, String> {
        let top = Path { text: "" };
        let map = match root {
            Value::Map(m) => m,
            other => return Err(format!("expected map, found {}", type_name(other))),
        };
        let mut md = Metadata::default();
        for (k, v) in map {
            let key = key_string(k);
            match key.as_str() {
                "amdhsa.version" => md.version = as_u64_list(&top, &key, v)?,
                "amdhsa.target" => md.target = Some(as_str(&top, &key, v)?),
                "amdhsa.printf" => match v {
                    Value::Array(a) => md.printf = a.iter().map(|x| as_str(&top, &key, x)).collect::<Result<_, _>>()?,
                    _ => return Err(expected(&top, &key, "array", v)),
                },
                "amdhsa.kernels" => {
                    let list = match v {
                        Value::Array(a) => a,
                        _ => return Err(expected(&top, &key, "array", v)),
                    };
                    md.kernels.reserve(list.len());
                    for (i, kv) in list.iter().enumerate() {
                        md.kernels.push(KernelMetadata::from_value(i, kv)?);
                    }
                }
                _ => {
                    md.extra.insert(key, msgpack_to_json(v));
                }
            }
        }
        Ok(md)
    }
}

impl KernelMetadata {
    fn from_value(index: usize, v: &Value) -> Result<KernelMetadata, String> {
        let at = format!("amdhsa.kernels[{index}]");
        let map = as_map(&Path { text: &at }, "", v)?;
        // Name the kernel in later messages if we can find it.
        let name = map
            .iter()
            .find(|(k, _)| k.as_str() == Some(".name"))
            .and_then(|(_, v)| v.as_str())
            .unwrap_or("?");
        let text = format!("{at} ({name}) ");
        let p = Path { text: &text };
        let mut km = KernelMetadata::default();
        let (mut have_name, mut have_symbol) = (false, false);
        for (k, v) in map {
            let key = key_string(k);
            let opt_u = |v| as_u64(&p, &key, v).map(Some);
            match key.as_str() {
                ".name" => {
                    km.name = as_str(&p, &key, v)?;
                    have_name = true;
                }
                ".symbol" => {
                    km.symbol = as_str(&p, &key, v)?;
                    have_symbol = true;
                }
                ".language" => km.language = Some(as_str(&p, &key, v)?),
                ".language_version" => km.language_version = as_u64_list(&p, &key, v)?,
                ".args" => {
                    let list = match v {
                        Value::Array(a) => a,
                        _ => return Err(expected(&p, &key, "array", v)),
                    };
                    for (j, av) in list.iter().enumerate() {
                        km.args.push(KernelArg::from_value(&format!("{text}.args[{j}]"), av)?);
                    }
                }
                ".reqd_workgroup_size" => km.reqd_workgroup_size = as_u64_list(&p, &key, v)?,
                ".workgroup_size_hint" => km.workgroup_size_hint = as_u64_list(&p, &key, v)?,
                ".vec_type_hint" => km.vec_type_hint = Some(as_str(&p, &key, v)?),
                ".device_enqueue_symbol" => km.device_enqueue_symbol = Some(as_str(&p, &key, v)?),
                ".kernarg_segment_size" => km.kernarg_segment_size = opt_u(v)?,
                ".kernarg_segment_align" => km.kernarg_segment_align = opt_u(v)?,
                ".group_segment_fixed_size" => km.group_segment_fixed_size = opt_u(v)?,
                ".private_segment_fixed_size" => km.private_segment_fixed_size = opt_u(v)?,
                ".wavefront_size" => km.wavefront_size = opt_u(v)?,
                ".sgpr_count" => km.sgpr_count = opt_u(v)?,
                ".vgpr_count" => km.vgpr_count = opt_u(v)?,
                ".agpr_count" => km.agpr_count = opt_u(v)?,
                ".max_flat_workgroup_size" => km.max_flat_workgroup_size = opt_u(v)?,
                ".sgpr_spill_count" => km.sgpr_spill_count = opt_u(v)?,
                ".vgpr_spill_count" => km.vgpr_spill_count = opt_u(v)?,
                ".kind" => km.kind = Some(as_str(&p, &key, v)?),
                ".uses_dynamic_stack" => km.uses_dynamic_stack = Some(as_bool(&p, &key, v)?),
                ".workgroup_processor_mode" => km.workgroup_processor_mode = Some(as_bool(&p, &key, v)?),
                ".uniform_work_group_size" => km.uniform_work_group_size = Some(as_bool(&p, &key, v)?),
                _ => {
                    km.extra.insert(key, msgpack_to_json(v));
                }
            }
        }
        if !have_name {
            return Err(format!("{text}missing .name"));
        }
        if !have_symbol {
            return Err(format!("{text}missing .symbol"));
        }
        Ok(km)
    }
}

impl KernelArg {
    fn from_value(at: &str, v: &Value) -> Result<KernelArg, String> {
        let prefix = format!("{at} ");
        let p = Path { text: &prefix };
        let map = as_map(&p, "", v)?;
        let mut a = KernelArg::default();
        let (mut have_size, mut have_offset, mut have_kind) = (false, false, false);
        for (k, v) in map {
            let key = key_string(k);
            match key.as_str() {
                ".name" => a.name = Some(as_str(&p, &key, v)?),
                ".type_name" => a.type_name = Some(as_str(&p, &key, v)?),
                ".size" => {
                    a.size = as_u64(&p, &key, v)?;
                    have_size = true;
                }
                ".offset" => {
                    a.offset = as_u64(&p, &key, v)?;
                    have_offset = true;
                }
                ".value_kind" => {
                    a.value_kind = as_str(&p, &key, v)?;
                    have_kind = true;
                }
                ".value_type" => a.value_type = Some(as_str(&p, &key, v)?),
                ".pointee_align" => a.pointee_align = Some(as_u64(&p, &key, v)?),
                ".address_space" => a.address_space = Some(as_str(&p, &key, v)?),
                ".access" => a.access = Some(as_str(&p, &key, v)?),
                ".actual_access" => a.actual_access = Some(as_str(&p, &key, v)?),
                ".is_const" => a.is_const = as_bool(&p, &key, v)?,
                ".is_restrict" => a.is_restrict = as_bool(&p, &key, v)?,
                ".is_volatile" => a.is_volatile = as_bool(&p, &key, v)?,
                ".is_pipe" => a.is_pipe = as_bool(&p, &key, v)?,
                _ => {
                    a.extra.insert(key, msgpack_to_json(v));
                }
            }
        }
        for (have, key) in [
            (have_size, ".size"),
            (have_offset, ".offset"),
            (have_kind, ".value_kind"),
        ] {
            if !have {
                return Err(format!("{prefix}missing {key}"));
            }
        }
        Ok(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Value {
        Value::from(x)
    }

    #[test]
    fn non_map_root_is_an_error() {
        let mut buf = Vec::new();
        rmpv::encode::write_value(&mut buf, &Value::Array(vec![])).unwrap();
        assert_eq!(Metadata::from_msgpack(&buf).unwrap_err(), "expected map, found array");
    }

    #[test]
    fn wrong_type_names_kernel_and_key() {
        let kernel = Value::Map(vec![
            (s(".name"), s("k")),
            (s(".symbol"), s("k.kd")),
            (s(".sgpr_count"), s("x")),
        ]);
        let root = Value::Map(vec![(s("amdhsa.kernels"), Value::Array(vec![kernel]))]);
        let err = Metadata::from_value(&root).unwrap_err();
        assert_eq!(
            err,
            "amdhsa.kernels[0] (k) .sgpr_count: expected unsigned integer, found string"
        );
    }

    #[test]
    fn unknown_keys_are_kept() {
        let kernel = Value::Map(vec![
            (s(".name"), s("k")),
            (s(".symbol"), s("k.kd")),
            (s(".new_key"), Value::from(7)),
        ]);
        let root = Value::Map(vec![
            (s("amdhsa.kernels"), Value::Array(vec![kernel])),
            (s("vendor"), s("x")),
        ]);
        let md = Metadata::from_value(&root).unwrap();
        assert_eq!(md.kernels[0].extra.get(".new_key"), Some(&Json::from(7)));
        assert_eq!(md.extra.get("vendor"), Some(&Json::from("x")));
    }

    #[test]
    fn truncated_msgpack_is_an_error() {
        let kernel = Value::Map(vec![(s(".name"), s("k")), (s(".symbol"), s("k.kd"))]);
        let root = Value::Map(vec![(s("amdhsa.kernels"), Value::Array(vec![kernel]))]);
        let mut buf = Vec::new();
        rmpv::encode::write_value(&mut buf, &root).unwrap();
        for len in 0..buf.len() {
            assert!(Metadata::from_msgpack(&buf[..len]).is_err());
        }
        assert!(Metadata::from_msgpack(&buf).is_ok());
    }
}
