//! Kernel names as people read and type them.
//!
//! A HIP kernel's symbol is its mangled C++ name (`_Z4vaddPfS_S_i`); people read the demangled one
//! (`vadd(float*, float*, float*, int)`, as rocprofv3 and c++filt print it) and type the plain one (`vadd`).
//! Every command that shows a kernel name shows [`demangle`]d text, and every option that names a kernel
//! accepts any of the spellings [`matches`] lists, so the two never disagree.

use super::{CodeObject, Kernel};

/// The demangled name of `symbol` (Itanium C++ ABI, what clang emits for HIP), or `symbol` itself when it is
/// not a mangled name (OpenCL C and assembly kernels, `extern "C"` functions).
pub fn demangle(symbol: &str) -> String {
    if !symbol.starts_with("_Z") {
        return symbol.to_string();
    }
    cpp_demangle::Symbol::new(symbol.as_bytes())
        .ok()
        .and_then(|s| s.demangle().ok())
        .unwrap_or_else(|| symbol.to_string())
}

/// The function name in a demangled name: without its parameter list, return type or template arguments
/// (`void foo<4>(int*)` → `foo`, `ns::k(int)` → `ns::k`).
pub fn function_name(demangled: &str) -> &str {
    // the parameter list is the last top-level parenthesis group; what precedes it is `[return type ]name[<args>]`
    let bytes = demangled.as_bytes();
    let mut depth = 0i32;
    let mut open = None;
    for (i, &c) in bytes.iter().enumerate().rev() {
        match c {
            b')' => depth += 1,
            b'(' => {
                depth -= 1;
                if depth == 0 {
                    open = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let head = &demangled[..open.unwrap_or(demangled.len())];
    let head = strip_template_args(head);
    // a return type is separated from the name by a space outside angle brackets
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in head.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            ' ' if depth == 0 => start = i + 1,
            _ => {}
        }
    }
    &head[start..]
}

/// `name` without trailing template arguments (`foo<4, int>` → `foo`); unchanged without them.
fn strip_template_args(name: &str) -> &str {
    let Some(stripped) = name.strip_suffix('>') else {
        return name;
    };
    let mut depth = 1i32;
    for (i, c) in stripped.char_indices().rev() {
        match c {
            '>' => depth += 1,
            '<' => {
                depth -= 1;
                if depth == 0 {
                    return &name[..i];
                }
            }
            _ => {}
        }
    }
    name
}

/// Whether `query`, as a person typed it, names the kernel `symbol`: the symbol itself, its demangled name
/// (`vadd(float*, float*, float*, int)`), or the function name in it, qualified (`ns::reduce`) or not
/// (`reduce`). Surrounding whitespace in `query` is ignored.
pub fn matches(symbol: &str, query: &str) -> bool {
    let query = query.trim();
    if query.is_empty() {
        return false;
    }
    if symbol == query {
        return true;
    }
    let demangled = demangle(symbol);
    if demangled == symbol {
        return false;
    }
    if demangled == query {
        return true;
    }
    let name = function_name(&demangled);
    name == query || name.rsplit("::").next() == Some(query)
}

/// The index of the kernel of `co` that `query` names (symbol, demangled or plain name: [`matches`]); an
/// error listing the kernels when none or several match.
pub fn pick_kernel(co: &CodeObject, query: &str) -> Result<usize, String> {
    let listed = |ks: &mut dyn Iterator<Item = &Kernel>| ks.map(|k| demangle(&k.name)).collect::<Vec<_>>().join(", ");
    if let Some(i) = co.kernels.iter().position(|x| x.name == query) {
        return Ok(i);
    }
    let found: Vec<usize> = (0..co.kernels.len())
        .filter(|&i| matches(&co.kernels[i].name, query))
        .collect();
    match found[..] {
        [i] => Ok(i),
        [] => Err(format!(
            "no kernel `{query}` (kernels: {})",
            listed(&mut co.kernels.iter())
        )),
        _ => Err(format!(
            "`{query}` names {} kernels ({}); give the mangled name",
            found.len(),
            found
                .iter()
                .map(|&i| co.kernels[i].name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mangled_names_demangle_as_cxxfilt_prints_them_and_others_stay() {
        assert_eq!(demangle("_Z4vaddPfS_S_i"), "vadd(float*, float*, float*, int)");
        assert_eq!(
            demangle("_Z10reduce_sumPKfPfj"),
            "reduce_sum(float const*, float*, unsigned int)"
        );
        assert_eq!(demangle("vadd"), "vadd");
        assert_eq!(demangle("_Znot-a-name"), "_Znot-a-name");
    }

    #[test]
    fn function_names_drop_return_types_parameters_and_template_arguments() {
        assert_eq!(function_name("vadd(float*, int)"), "vadd");
        assert_eq!(function_name("void foo<4>(int*)"), "foo");
        assert_eq!(function_name("void ns::k<ns::T<int>, 2>(ns::T<int> const*)"), "ns::k");
        assert_eq!(function_name("plain"), "plain");
    }

    #[test]
    fn a_kernel_is_named_by_symbol_demangled_name_or_plain_name() {
        // _ZN2ns6reduceEPfi = ns::reduce(float*, int)
        for q in ["_Z4vaddPfS_S_i", "vadd", "vadd(float*, float*, float*, int)", " vadd "] {
            assert!(matches("_Z4vaddPfS_S_i", q), "{q}");
        }
        for q in ["ns::reduce", "reduce", "ns::reduce(float*, int)"] {
            assert!(matches("_ZN2ns6reduceEPfi", q), "{q}");
        }
        assert!(matches("reduce_sum", "reduce_sum"));
        assert!(!matches("_Z5vadd2Pf", "vadd"));
        assert!(!matches("_Z4vaddPfS_S_i", "vad"));
        assert!(!matches("_Z4vaddPfS_S_i", ""));
        assert!(!matches("vadd", "vadd(float*)"));
    }
}
