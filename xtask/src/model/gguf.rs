//! Reads the metadata of a GGUF file (header and key/value pairs, not the tensors), to show
//! a model's name, licence, architecture, context length and whether it has a chat template.

use std::io::{BufReader, Read};
use std::path::Path;

/// What `cargo xtask model` shows of a model file.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Metadata {
    pub name: Option<String>,
    pub licence: Option<String>,
    pub architecture: Option<String>,
    pub context_length: Option<u64>,
    pub chat_template: bool,
}

/// Reads the metadata of the GGUF file at `path`.
pub(crate) fn read(path: &Path) -> Result<Metadata, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse(&mut BufReader::new(file)).map_err(|e| format!("{}: {e}", path.display()))
}

/// A value read for a key: only the kinds the caller looks at are kept.
enum Value {
    Text(String),
    Number(u64),
    Other,
}

/// Parses GGUF (version 2 or 3) metadata from `r`.
pub(crate) fn parse(r: &mut impl Read) -> Result<Metadata, String> {
    let mut magic = [0u8; 4];
    read_exact(r, &mut magic)?;
    if &magic != b"GGUF" {
        return Err("not a GGUF file (bad magic)".to_string());
    }
    let version = u32::from_le_bytes(bytes(r)?);
    if !(2..=3).contains(&version) {
        return Err(format!("unsupported GGUF version {version}"));
    }
    let _tensors = u64::from_le_bytes(bytes(r)?);
    let kv_count = u64::from_le_bytes(bytes(r)?);
    if kv_count > 1_000_000 {
        return Err(format!("corrupt GGUF header ({kv_count} metadata keys)"));
    }
    let mut meta = Metadata::default();
    for _ in 0..kv_count {
        let key = string(r)?;
        let kind = u32::from_le_bytes(bytes(r)?);
        let value = value(r, kind)?;
        match (key.as_str(), value) {
            ("general.name", Value::Text(v)) => meta.name = Some(v),
            ("general.license", Value::Text(v)) => meta.licence = Some(v),
            ("general.architecture", Value::Text(v)) => meta.architecture = Some(v),
            ("tokenizer.chat_template", Value::Text(v)) => meta.chat_template = !v.is_empty(),
            (k, Value::Number(n)) if k.ends_with(".context_length") => {
                meta.context_length = Some(n)
            }
            _ => {}
        }
    }
    Ok(meta)
}

fn read_exact(r: &mut impl Read, buf: &mut [u8]) -> Result<(), String> {
    r.read_exact(buf)
        .map_err(|e| format!("truncated or unreadable GGUF metadata ({e})"))
}

fn bytes<const N: usize>(r: &mut impl Read) -> Result<[u8; N], String> {
    let mut buf = [0u8; N];
    read_exact(r, &mut buf)?;
    Ok(buf)
}

fn string(r: &mut impl Read) -> Result<String, String> {
    let len = u64::from_le_bytes(bytes(r)?);
    if len > 64 << 20 {
        return Err(format!("corrupt GGUF metadata (a {len}-byte string)"));
    }
    let mut buf = Vec::new();
    r.take(len)
        .read_to_end(&mut buf)
        .map_err(|e| format!("unreadable GGUF metadata ({e})"))?;
    if buf.len() as u64 != len {
        return Err("truncated GGUF metadata".to_string());
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

fn value(r: &mut impl Read, kind: u32) -> Result<Value, String> {
    Ok(match kind {
        0 | 1 | 7 => Value::Number(u64::from(bytes::<1>(r)?[0])),
        2 | 3 => Value::Number(u64::from(u16::from_le_bytes(bytes(r)?))),
        4 | 5 => Value::Number(u64::from(u32::from_le_bytes(bytes(r)?))),
        6 => {
            bytes::<4>(r)?;
            Value::Other
        }
        8 => Value::Text(string(r)?),
        9 => {
            let item = u32::from_le_bytes(bytes(r)?);
            let count = u64::from_le_bytes(bytes(r)?);
            if item == 9 || count > 16 << 20 {
                return Err(format!("corrupt GGUF metadata (array of {count})"));
            }
            for _ in 0..count {
                value(r, item)?;
            }
            Value::Other
        }
        10 | 11 => Value::Number(u64::from_le_bytes(bytes(r)?)),
        12 => {
            bytes::<8>(r)?;
            Value::Other
        }
        other => return Err(format!("corrupt GGUF metadata (value type {other})")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(out: &mut Vec<u8>, text: &str) {
        out.extend_from_slice(&(text.len() as u64).to_le_bytes());
        out.extend_from_slice(text.as_bytes());
    }

    fn sample(chat_template: bool) -> Vec<u8> {
        let mut out = b"GGUF".to_vec();
        out.extend_from_slice(&3u32.to_le_bytes());
        out.extend_from_slice(&0u64.to_le_bytes());
        out.extend_from_slice(&(4u64 + u64::from(chat_template)).to_le_bytes());
        s(&mut out, "general.name");
        out.extend_from_slice(&8u32.to_le_bytes());
        s(&mut out, "Tiny");
        s(&mut out, "qwen2.context_length");
        out.extend_from_slice(&4u32.to_le_bytes());
        out.extend_from_slice(&32768u32.to_le_bytes());
        s(&mut out, "tokenizer.ggml.tokens");
        out.extend_from_slice(&9u32.to_le_bytes());
        out.extend_from_slice(&8u32.to_le_bytes());
        out.extend_from_slice(&2u64.to_le_bytes());
        s(&mut out, "a");
        s(&mut out, "b");
        s(&mut out, "general.architecture");
        out.extend_from_slice(&8u32.to_le_bytes());
        s(&mut out, "qwen2");
        if chat_template {
            s(&mut out, "tokenizer.chat_template");
            out.extend_from_slice(&8u32.to_le_bytes());
            s(&mut out, "{{ messages }}");
        }
        out
    }

    #[test]
    fn metadata_is_read() {
        let meta = parse(&mut sample(true).as_slice()).unwrap();
        assert_eq!(
            meta,
            Metadata {
                name: Some("Tiny".into()),
                licence: None,
                architecture: Some("qwen2".into()),
                context_length: Some(32768),
                chat_template: true,
            }
        );
        assert!(!parse(&mut sample(false).as_slice()).unwrap().chat_template);
    }

    #[test]
    fn truncated_or_foreign_files_are_errors() {
        let full = sample(true);
        for cut in [2, 10, 30, full.len() - 3] {
            let err = parse(&mut &full[..cut]).unwrap_err();
            assert!(err.contains("GGUF"), "{cut}: {err}");
        }
        assert!(parse(&mut b"PK\x03\x04rest".as_slice())
            .unwrap_err()
            .contains("bad magic"));
    }
}
