//! Go build info read from an ELF executable's bytes: the toolchain that built it, the main
//! package and module, every dependency module and the build settings, as `go version -m`
//! prints them.
//!
//! The Go linker leaves a blob, aligned to 16 bytes, in the `.go.buildinfo` section (or, where
//! the section headers are gone, in the first writable, non-executable `PT_LOAD` segment): a
//! 32-byte header that starts with the 14-byte magic `"\xff Go buildinf:"`, then the pointer size
//! and a flags byte. Since Go 1.18 (flags bit `0x2`) the version and the module text follow the
//! header inline, each as a uvarint length and its bytes. Before that the header holds two
//! pointers, of that size and of the byte order of flags bit `0x1`, to Go string headers (data
//! pointer, length); addresses become file offsets through the `PT_LOAD` program headers. The
//! module text is framed by 16-byte sentinels and has tab-separated lines: `path`, `mod` (the
//! main module), `dep`, `=>` (a replacement of the module on the line before) and
//! `build KEY=VALUE`, whose key and value are Go-quoted (`strconv.Quote`) when they hold spaces,
//! tabs, quotes or line breaks. This follows Go's `debug/buildinfo` and
//! `runtime/debug.ParseBuildInfo` (Go 1.26), including what they reject.
//!
//! Any bytes may be given: a truncated or corrupt file is [`Binary::NotElf`] or
//! [`Binary::NotGo`], where `go version -m` says "unrecognized file format" or "not a Go
//! executable"; nothing panics, and nothing is allocated beyond the size of the input. Text that
//! is not UTF-8 (Go strings are bytes) is read with U+FFFD in place of the invalid bytes.

use object::elf::{FileHeader32, FileHeader64, PF_W, PF_X, PT_LOAD, SHF_COMPRESSED, SHT_STRTAB};
use object::read::elf::{FileHeader, ProgramHeader, SectionHeader};
use object::Endianness;

/// What an executable's bytes are, as far as Go is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Binary {
    /// A Go executable and its build info.
    Go(BuildInfo),
    /// A Go executable (it names the toolchain that built it) whose module text does not
    /// parse; `go version -m` fails on it too, and `error` is worded as Go words it.
    GoUnparsable { go_version: String, error: String },
    /// An ELF file without readable Go build info: a C program, a shared library, or a Go
    /// binary whose build info is cut off or corrupt.
    NotGo,
    /// Not an ELF file (a script, a Mach-O or PE executable, data), or one whose headers do not
    /// parse.
    NotElf,
}

/// The build info of a Go executable. Binaries built outside module mode have only the version.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BuildInfo {
    /// The toolchain: `go1.24.3`, possibly with experiments after a space (`go1.25.0 X:jsonv2`).
    pub go_version: String,
    /// The main package's import path: `example.com/cmd/server`, or `command-line-arguments`.
    pub path: Option<String>,
    /// The main module; its version is `(devel)` in a build from a work tree.
    pub main: Option<Module>,
    /// The modules that contributed packages, in the order Go lists them (sorted by path).
    pub deps: Vec<Module>,
    /// The build settings, in order: `-ldflags`, `CGO_ENABLED`, `GOARCH`, `GOOS`,
    /// `DefaultGODEBUG`, `vcs.revision`, … (values unquoted).
    pub settings: Vec<(String, String)>,
}

/// A module of a build: the main module or a dependency.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Module {
    /// The module path: `go.uber.org/automaxprocs`, or a directory for a local replacement.
    pub path: String,
    /// `v1.6.0`, a pseudo-version, or `(devel)` (the main module, a local replacement).
    pub version: String,
    /// The go.sum hash (`h1:…`); empty for the main module and for replaced modules.
    pub sum: String,
    /// The module whose code was built instead, by a `replace` directive.
    pub replace: Option<Box<Module>>,
}

impl BuildInfo {
    /// The value of the build setting `key` (`-ldflags`, `CGO_ENABLED`, `GOOS`, `vcs.revision`).
    pub fn setting(&self, key: &str) -> Option<&str> {
        self.settings
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The dependency whose module path is `path` (as required, before any replacement).
    pub fn dep(&self, path: &str) -> Option<&Module> {
        self.deps.iter().find(|m| m.path == path)
    }

    /// The go line's effect on one GODEBUG key: its value in the `DefaultGODEBUG` setting, which
    /// the toolchain writes for a main module whose go line is older than the toolchain (a
    /// `go 1.24` module built by Go 1.25 or later has `containermaxprocs=0`), and which GODEBUG
    /// in the environment overrides. `None` when the key keeps the toolchain's default.
    pub fn default_godebug(&self, key: &str) -> Option<&str> {
        crate::go::godebug_value(self.setting("DefaultGODEBUG")?, key)
    }
}

/// Reads the Go build info of an ELF executable from its bytes.
pub fn read(bytes: &[u8]) -> Binary {
    let Some(exe) = Exe::parse(bytes) else {
        return Binary::NotElf;
    };
    let Some((version, modinfo)) = exe.raw_build_info() else {
        return Binary::NotGo;
    };
    let go_version = text(version);
    match parse_modinfo(modinfo) {
        Ok(info) => Binary::Go(BuildInfo { go_version, ..info }),
        Err(error) => Binary::GoUnparsable { go_version, error },
    }
}

/// The magic that starts the build info blob.
const MAGIC: &[u8; 14] = b"\xff Go buildinf:";
/// The blob's header: magic, pointer size, flags, two pointers (used before Go 1.18).
const HEADER: usize = 32;
/// The blob's alignment.
const ALIGN: u64 = 16;
const FLAG_BIG_ENDIAN: u8 = 0x1;
const FLAG_INLINE: u8 = 0x2;

/// The part of an ELF file that build info is read through.
struct Exe<'a> {
    /// The loadable segments, each with its address and the bytes of its file image (cut at the
    /// end of the input).
    segments: Vec<(u64, &'a [u8])>,
    /// The address and size of the range the blob is searched in.
    data: Option<(u64, u64)>,
}

impl<'a> Exe<'a> {
    fn parse(bytes: &'a [u8]) -> Option<Exe<'a>> {
        if !bytes.starts_with(b"\x7fELF") {
            return None;
        }
        match bytes.get(4) {
            Some(1) => Exe::parse_as::<FileHeader32<Endianness>>(bytes),
            Some(2) => Exe::parse_as::<FileHeader64<Endianness>>(bytes),
            _ => None,
        }
    }

    fn parse_as<Elf: FileHeader<Endian = Endianness>>(bytes: &'a [u8]) -> Option<Exe<'a>> {
        let header = Elf::parse(bytes).ok()?;
        let endian = header.endian().ok()?;
        let programs = header.program_headers(endian, bytes).ok()?;
        let sections = header.section_headers(endian, bytes).ok()?;
        let mut data = buildinfo_section(header, endian, bytes, sections)?;
        // At most one entry per 32 or 56 bytes of input.
        let mut segments = Vec::with_capacity(programs.len());
        for p in programs {
            let offset: u64 = p.p_offset(endian).into();
            let filesz: u64 = p.p_filesz(endian).into();
            if offset > i64::MAX as u64 || filesz > i64::MAX as u64 {
                return None;
            }
            if p.p_type(endian) != PT_LOAD {
                continue;
            }
            let vaddr: u64 = p.p_vaddr(endian).into();
            if data.is_none() && p.p_flags(endian) & (PF_X | PF_W) == PF_W {
                data = Some((vaddr, p.p_memsz(endian).into()));
            }
            let clip = |n: u64| usize::try_from(n).map_or(bytes.len(), |n| n.min(bytes.len()));
            let (start, end) = (clip(offset), clip(offset + filesz));
            segments.push((vaddr, &bytes[start..end.max(start)]));
        }
        Some(Exe { segments, data })
    }

    /// The file's bytes from address `addr` to the end of its segment's file image.
    fn at(&self, addr: u64) -> Option<&'a [u8]> {
        self.segments.iter().find_map(|&(vaddr, image)| {
            let offset = usize::try_from(addr.checked_sub(vaddr)?).ok()?;
            image.get(offset..).filter(|rest| !rest.is_empty())
        })
    }

    /// The version and the module text, without its sentinels (empty when it has none).
    fn raw_build_info(&self) -> Option<(&'a [u8], &'a [u8])> {
        let (start, size) = self.data?;
        let end = start.checked_add(size)?;
        // The magic is aligned, so the search starts at the first aligned address.
        let start = start.checked_add(ALIGN - 1)? & !(ALIGN - 1);
        if start >= end {
            return None;
        }
        let range = self.at(start)?;
        let range =
            &range[..usize::try_from(end - start).map_or(range.len(), |n| n.min(range.len()))];
        let found = memchr::memmem::find_iter(range, MAGIC).find(|i| *i as u64 % ALIGN == 0)?;
        if end - start - (found as u64) < HEADER as u64 {
            return None;
        }
        let addr = start + found as u64;
        let header = self.at(addr)?.get(..HEADER)?;
        let flags = header[15];
        let (version, modinfo) = if flags & FLAG_INLINE != 0 {
            let (version, next) = self.inline_string(addr + HEADER as u64)?;
            let (modinfo, _) = self.inline_string(next)?;
            (version, modinfo)
        } else {
            let size = usize::from(header[14]);
            if size != 4 && size != 8 {
                return None;
            }
            let word = Word {
                size,
                big_endian: flags & FLAG_BIG_ENDIAN != 0,
            };
            let version = self.go_string(word, word.read(&header[16..]));
            let modinfo = self.go_string(word, word.read(&header[16 + size..]));
            (version.unwrap_or(b""), modinfo.unwrap_or(b""))
        };
        if version.is_empty() {
            return None;
        }
        // The sentinels: 16 bytes before the text and 16 after its final line break.
        let n = modinfo.len();
        let modinfo = if n >= 33 && modinfo[n - 17] == b'\n' {
            &modinfo[16..n - 16]
        } else {
            &[]
        };
        Some((version, modinfo))
    }

    /// The uvarint-length-prefixed string at `addr`, and the address after it.
    fn inline_string(&self, addr: u64) -> Option<(&'a [u8], u64)> {
        let bytes = self.at(addr)?;
        let (len, n) = uvarint(bytes)?;
        let s = bytes[n..].get(..usize::try_from(len).ok()?)?;
        Some((s, addr.checked_add(n as u64)?.checked_add(len)?))
    }

    /// The contents of the Go string whose header (data pointer, length) is at `addr`.
    fn go_string(&self, word: Word, addr: u64) -> Option<&'a [u8]> {
        let header = self.at(addr)?.get(..2 * word.size)?;
        let (data, len) = (word.read(header), word.read(&header[word.size..]));
        if len == 0 {
            return Some(b"");
        }
        self.at(data)?.get(..usize::try_from(len).ok()?)
    }
}

/// The address and size of the `.go.buildinfo` section, if there is one, after the checks that
/// Go's `elf.NewFile` makes of the section headers; `None` for a file that fails them, which Go
/// does not read as ELF (as a truncated file whose section names are cut off).
fn buildinfo_section<Elf: FileHeader<Endian = Endianness>>(
    header: &Elf,
    endian: Endianness,
    bytes: &[u8],
    sections: &[Elf::SectionHeader],
) -> Option<Option<(u64, u64)>> {
    if sections.is_empty() {
        return Some(None);
    }
    let compression_header = std::mem::size_of::<Elf::CompressionHeader>() as u64;
    for s in sections {
        let offset: u64 = s.sh_offset(endian).into();
        let size: u64 = s.sh_size(endian).into();
        if offset > i64::MAX as u64 || size > i64::MAX as u64 {
            return None;
        }
        // Go reads the header of each compressed section.
        let flags: u64 = s.sh_flags(endian).into();
        if flags & u64::from(SHF_COMPRESSED) != 0
            && (size < compression_header || offset + compression_header > bytes.len() as u64)
        {
            return None;
        }
    }
    // Without a section name table no section has a name.
    let index = header.shstrndx(endian, bytes).unwrap_or(0) as usize;
    if index == 0 {
        return Some(None);
    }
    let names = sections.get(index)?;
    if names.sh_type(endian) != SHT_STRTAB {
        return None;
    }
    let names = names.data(endian, bytes).ok()?;
    let mut found = None;
    for s in sections {
        // Every name must be in the table and end there.
        let name = names.get(s.sh_name(endian) as usize..)?;
        let name = &name[..memchr::memchr(0, name)?];
        if found.is_none() && name == b".go.buildinfo" {
            found = Some((s.sh_addr(endian).into(), s.sh_size(endian).into()));
        }
    }
    Some(found)
}

/// A target pointer's size and byte order.
#[derive(Clone, Copy)]
struct Word {
    size: usize,
    big_endian: bool,
}

impl Word {
    /// The pointer at the start of `b`, which holds at least `size` bytes.
    fn read(self, b: &[u8]) -> u64 {
        let b = &b[..self.size];
        let fold = |acc: u64, byte: &u8| (acc << 8) | u64::from(*byte);
        if self.big_endian {
            b.iter().fold(0, fold)
        } else {
            b.iter().rev().fold(0, fold)
        }
    }
}

/// The unsigned varint at the start of `b` and its length, as Go's `binary.Uvarint` reads it:
/// `None` when `b` ends inside it or it overflows 64 bits.
fn uvarint(b: &[u8]) -> Option<(u64, usize)> {
    let mut x = 0u64;
    for (i, &byte) in b.iter().enumerate().take(10) {
        if byte < 0x80 {
            if i == 9 && byte > 1 {
                return None;
            }
            return Some((x | (u64::from(byte) << (7 * i)), i + 1));
        }
        x |= u64::from(byte & 0x7f) << (7 * i);
    }
    None
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Which module a `=>` line replaces.
enum Last {
    None,
    Main,
    Dep,
}

/// The module text's lines, as `runtime/debug.ParseBuildInfo` reads them: unknown lines are
/// skipped, and so is a last line without a line break.
fn parse_modinfo(mut rest: &[u8]) -> Result<BuildInfo, String> {
    let mut info = BuildInfo::default();
    let mut last = Last::None;
    let mut number = 1;
    while let Some(end) = memchr::memchr(b'\n', rest) {
        let line = &rest[..end];
        rest = &rest[end + 1..];
        parse_line(&mut info, &mut last, line)
            .map_err(|e| format!("could not parse Go build info: line {number}: {e}"))?;
        number += 1;
    }
    Ok(info)
}

fn parse_line(info: &mut BuildInfo, last: &mut Last, line: &[u8]) -> Result<(), String> {
    if let Some(path) = line.strip_prefix(b"path\t") {
        info.path = (!path.is_empty()).then(|| text(path));
    } else if let Some(columns) = line.strip_prefix(b"mod\t") {
        info.main = Some(module(columns)?);
        *last = Last::Main;
    } else if let Some(columns) = line.strip_prefix(b"dep\t") {
        info.deps.push(module(columns)?);
        *last = Last::Dep;
    } else if let Some(columns) = line.strip_prefix(b"=>\t") {
        let c: Vec<&[u8]> = columns.split(|&b| b == b'\t').collect();
        if c.len() != 3 {
            return Err(format!(
                "expected 3 columns for replacement; got {}",
                c.len()
            ));
        }
        let replaced = match std::mem::replace(last, Last::None) {
            Last::None => None,
            Last::Main => info.main.as_mut(),
            Last::Dep => info.deps.last_mut(),
        };
        let replaced = replaced.ok_or("replacement with no module on previous line")?;
        replaced.replace = Some(Box::new(Module {
            path: text(c[0]),
            version: text(c[1]),
            sum: text(c[2]),
            replace: None,
        }));
    } else if let Some(kv) = line.strip_prefix(b"build\t") {
        info.settings.push(setting(kv)?);
    }
    Ok(())
}

/// A `mod` or `dep` line's columns: path, version and (optionally) sum.
fn module(columns: &[u8]) -> Result<Module, String> {
    let c: Vec<&[u8]> = columns.split(|&b| b == b'\t').collect();
    if c.len() != 2 && c.len() != 3 {
        return Err(format!("expected 2 or 3 columns; got {}", c.len()));
    }
    Ok(Module {
        path: text(c[0]),
        version: text(c[1]),
        sum: c.get(2).map(|s| text(s)).unwrap_or_default(),
        replace: None,
    })
}

/// A `build` line's `KEY=VALUE`, either of them possibly quoted.
fn setting(kv: &[u8]) -> Result<(String, String), String> {
    let (key, raw) = match kv.first() {
        None => return Err("build line missing '='".into()),
        Some(b'=') => return Err("build line with missing key".into()),
        Some(b'"' | b'`') => {
            let (key, n) = quoted_prefix(kv).ok_or("invalid quoted key in build line")?;
            match kv.get(n) {
                None => return Err("build line missing '=' after quoted key".into()),
                Some(b'=') => (key, &kv[n + 1..]),
                Some(&c) => {
                    return Err(format!(
                        "unexpected character after quoted key: {:?}",
                        char::from(c)
                    ))
                }
            }
        }
        Some(_) => {
            let eq = memchr::memchr(b'=', kv).ok_or("build line missing '=' after key")?;
            let key = &kv[..eq];
            if needs_quotes(key, b"= \t\r\n\"`") {
                return Err(format!("unquoted key {:?} must be quoted", text(key)));
            }
            (key.to_vec(), &kv[eq + 1..])
        }
    };
    let value = match raw.first() {
        Some(b'"' | b'`') => match quoted_prefix(raw) {
            Some((value, n)) if n == raw.len() => value,
            _ => return Err("invalid quoted value in build line".into()),
        },
        _ if needs_quotes(raw, b" \t\r\n\"`") => {
            return Err(format!("unquoted value {:?} must be quoted", text(raw)))
        }
        _ => raw.to_vec(),
    };
    Ok((text(&key), text(&value)))
}

/// Whether a setting's key or value holds one of `special` and so must be written quoted.
fn needs_quotes(s: &[u8], special: &[u8]) -> bool {
    s.iter().any(|b| special.contains(b))
}

/// The Go string literal (`"…"` or `` `…` ``) at the start of `s`, unquoted as Go's
/// `strconv.Unquote` does, and its length in `s`; `None` where Go reports a syntax error.
fn quoted_prefix(s: &[u8]) -> Option<(Vec<u8>, usize)> {
    match s.first()? {
        b'`' => {
            // Raw: everything up to the next backquote, less carriage returns.
            let end = 1 + memchr::memchr(b'`', &s[1..])?;
            let out = s[1..end].iter().copied().filter(|&b| b != b'\r').collect();
            Some((out, end + 1))
        }
        b'"' => {
            let mut out = Vec::new();
            let mut i = 1;
            loop {
                match *s.get(i)? {
                    b'"' => return Some((out, i + 1)),
                    b'\n' => return None,
                    b'\\' => {
                        let (n, escaped) = escape(&s[i + 1..])?;
                        match escaped {
                            Escaped::Byte(b) => out.push(b),
                            Escaped::Char(c) => {
                                out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes())
                            }
                        }
                        i += 1 + n;
                    }
                    b if b < 0x80 => {
                        out.push(b);
                        i += 1;
                    }
                    _ => {
                        // A UTF-8 sequence is copied whole; each invalid byte becomes U+FFFD.
                        let tail = &s[i..s.len().min(i + 4)];
                        let valid = match std::str::from_utf8(tail) {
                            Ok(t) => t,
                            Err(e) => std::str::from_utf8(&tail[..e.valid_up_to()]).ok()?,
                        };
                        let c = valid.chars().next().unwrap_or(char::REPLACEMENT_CHARACTER);
                        out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                        i += if valid.is_empty() { 1 } else { c.len_utf8() };
                    }
                }
            }
        }
        _ => None,
    }
}

enum Escaped {
    /// `\x..` and octal escapes: one byte, which need not be UTF-8.
    Byte(u8),
    Char(char),
}

/// The escape sequence after a backslash in a double-quoted literal, and its length.
fn escape(s: &[u8]) -> Option<(usize, Escaped)> {
    let simple = |b: u8| Some((1, Escaped::Byte(b)));
    let hex = |n: usize| -> Option<u32> {
        let digits = std::str::from_utf8(s.get(1..1 + n)?).ok()?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u32::from_str_radix(digits, 16).ok()
    };
    match *s.first()? {
        b'a' => simple(0x07),
        b'b' => simple(0x08),
        b'f' => simple(0x0c),
        b'n' => simple(b'\n'),
        b'r' => simple(b'\r'),
        b't' => simple(b'\t'),
        b'v' => simple(0x0b),
        b'\\' => simple(b'\\'),
        b'"' => simple(b'"'),
        b'x' => Some((3, Escaped::Byte(hex(2)? as u8))),
        b'u' => Some((5, Escaped::Char(char::from_u32(hex(4)?)?))),
        b'U' => Some((9, Escaped::Char(char::from_u32(hex(8)?)?))),
        b'0'..=b'7' => {
            let digits = s.get(..3)?;
            if !digits.iter().all(|b| (b'0'..=b'7').contains(b)) {
                return None;
            }
            let v = digits
                .iter()
                .fold(0u32, |v, d| (v << 3) | u32::from(d - b'0'));
            Some((3, Escaped::Byte(u8::try_from(v).ok()?)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sentinels `cmd/go` frames the module text with.
    const START: [u8; 16] = [
        0x30, 0x77, 0xaf, 0x0c, 0x92, 0x74, 0x08, 0x02, 0x41, 0xe1, 0xc1, 0x07, 0xe6, 0xd6, 0x18,
        0xe6,
    ];
    const END: [u8; 16] = [
        0xf9, 0x32, 0x43, 0x31, 0x86, 0x18, 0x20, 0x72, 0x00, 0x82, 0x42, 0x10, 0x41, 0x16, 0xd8,
        0xf2,
    ];
    /// Where the segment of [`elf`] is loaded, and its offset in the file.
    const BASE: u64 = 0x40_0000;
    const OFFSET: u64 = 128;

    /// Module text as `cmd/go` writes it, with an empty line after a replacement.
    const MODINFO: &str = "path\texample.com/server\n\
        mod\texample.com\t(devel)\t\n\
        dep\tgo.uber.org/automaxprocs\tv1.6.0\th1:O3y2/QNTOdbF+e/dpXNNW7Rx2hZ4sTIPyybbxyNqTUs=\n\
        dep\texample.com/fork\tv1.0.0\n\
        =>\t../fork\t(devel)\t\n\n\
        build\t-buildmode=exe\n\
        build\t-ldflags=\"-s -w -X main.v=\\\"1\\\"\"\n\
        build\t\"odd key\"=`raw\tvalue`\n\
        build\tempty=\n\
        build\tDefaultGODEBUG=containermaxprocs=0,updatemaxprocs=0,containermaxprocs=1\n\
        unknown\tline\n";

    fn framed(text: &str) -> Vec<u8> {
        [&START[..], text.as_bytes(), &END[..]].concat()
    }

    fn varint(mut n: u64, out: &mut Vec<u8>) {
        while n >= 0x80 {
            out.push(n as u8 | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
    }

    /// A 64-bit little-endian ELF executable without section headers, whose one writable
    /// `PT_LOAD` segment holds `data` (at file offset [`OFFSET`], address `BASE + OFFSET`).
    fn elf(data: &[u8]) -> Vec<u8> {
        let mut f = Vec::new();
        f.extend_from_slice(b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0");
        f.extend_from_slice(&2u16.to_le_bytes()); // ET_EXEC
        f.extend_from_slice(&62u16.to_le_bytes()); // EM_X86_64
        f.extend_from_slice(&1u32.to_le_bytes());
        f.extend_from_slice(&0u64.to_le_bytes()); // entry
        f.extend_from_slice(&64u64.to_le_bytes()); // phoff
        f.extend_from_slice(&0u64.to_le_bytes()); // shoff
        f.extend_from_slice(&0u32.to_le_bytes());
        for h in [64u16, 56, 1, 64, 0, 0] {
            f.extend_from_slice(&h.to_le_bytes());
        }
        f.extend_from_slice(&PT_LOAD.to_le_bytes());
        f.extend_from_slice(&(PF_W | 4).to_le_bytes());
        let len = data.len() as u64;
        for w in [OFFSET, BASE + OFFSET, BASE + OFFSET, len, len, 0x1000] {
            f.extend_from_slice(&w.to_le_bytes());
        }
        f.resize(OFFSET as usize, 0);
        f.extend_from_slice(data);
        f
    }

    fn header(ptr_size: u8, flags: u8) -> Vec<u8> {
        let mut h = MAGIC.to_vec();
        h.extend_from_slice(&[ptr_size, flags]);
        h.resize(HEADER, 0);
        h
    }

    /// The blob of Go 1.18 and later, after 16 bytes of other data.
    fn inline(version: &str, modinfo: &[u8]) -> Vec<u8> {
        let mut d = vec![0u8; 16];
        d.extend(header(8, FLAG_INLINE));
        varint(version.len() as u64, &mut d);
        d.extend_from_slice(version.as_bytes());
        varint(modinfo.len() as u64, &mut d);
        d.extend_from_slice(modinfo);
        d
    }

    /// The blob of Go 1.17 and earlier: pointers to string headers, then the strings.
    fn pointers(size: usize, big_endian: bool, version: &str, modinfo: &[u8]) -> Vec<u8> {
        let word = |v: u64| {
            let b = if big_endian {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            };
            if big_endian {
                b[8 - size..].to_vec()
            } else {
                b[..size].to_vec()
            }
        };
        let at = |offset: usize| BASE + OFFSET + offset as u64;
        let flags = if big_endian { FLAG_BIG_ENDIAN } else { 0 };
        let mut d = header(size as u8, flags);
        // Headers at 32 and 32 + 2 * size, strings after them.
        let strings = HEADER + 4 * size;
        d.truncate(16);
        d.extend(word(at(HEADER)));
        d.extend(word(at(HEADER + 2 * size)));
        d.resize(HEADER, 0);
        d.extend(word(at(strings)));
        d.extend(word(version.len() as u64));
        d.extend(word(at(strings + version.len())));
        d.extend(word(modinfo.len() as u64));
        d.extend_from_slice(version.as_bytes());
        d.extend_from_slice(modinfo);
        d
    }

    fn go(bytes: &[u8]) -> BuildInfo {
        match read(bytes) {
            Binary::Go(info) => info,
            other => panic!("not read as Go: {other:?}"),
        }
    }

    fn check_full(info: &BuildInfo) {
        assert_eq!(info.go_version, "go1.26.8");
        assert_eq!(info.path.as_deref(), Some("example.com/server"));
        let main = info.main.as_ref().unwrap();
        assert_eq!(
            (main.path.as_str(), main.version.as_str()),
            ("example.com", "(devel)")
        );
        assert_eq!(main.sum, "");
        let amp = info.dep("go.uber.org/automaxprocs").unwrap();
        assert_eq!(amp.version, "v1.6.0");
        assert!(amp.sum.starts_with("h1:"));
        let fork = info.dep("example.com/fork").unwrap();
        let replace = fork.replace.as_deref().unwrap();
        assert_eq!(
            (replace.path.as_str(), replace.version.as_str()),
            ("../fork", "(devel)")
        );
        assert_eq!(info.setting("-buildmode"), Some("exe"));
        assert_eq!(info.setting("-ldflags"), Some("-s -w -X main.v=\"1\""));
        assert_eq!(info.setting("odd key"), Some("raw\tvalue"));
        assert_eq!(info.setting("empty"), Some(""));
        assert_eq!(info.setting("GOOS"), None);
        assert_eq!(info.default_godebug("containermaxprocs"), Some("1"));
        assert_eq!(info.default_godebug("updatemaxprocs"), Some("0"));
        assert_eq!(info.default_godebug("asynctimerchan"), None);
        assert_eq!(info.settings.len(), 5);
    }

    #[test]
    fn reads_the_inline_format() {
        let file = elf(&inline("go1.26.8", &framed(MODINFO)));
        check_full(&go(&file));
        // Wherever the bytes start in memory.
        let shifted = [&[0u8][..], &file].concat();
        check_full(&go(&shifted[1..]));
    }

    #[test]
    fn reads_the_pointer_format() {
        for (size, big_endian) in [(8, false), (4, false), (8, true), (4, true)] {
            let blob = pointers(size, big_endian, "go1.26.8", &framed(MODINFO));
            check_full(&go(&elf(&blob)));
        }
        // A version string out of reach: not Go, as for Go's reader.
        let mut blob = pointers(8, false, "go1.17", &framed(MODINFO));
        blob[16..24].copy_from_slice(&0xdead_0000u64.to_le_bytes());
        assert_eq!(read(&elf(&blob)), Binary::NotGo);
        // A module text out of reach: Go, without modules.
        let mut blob = pointers(8, false, "go1.17", &framed(MODINFO));
        blob[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(go(&elf(&blob)).go_version, "go1.17");
        assert_eq!(go(&elf(&blob)).main, None);
    }

    #[test]
    fn module_text_without_its_sentinels_is_no_module_text() {
        let info = go(&elf(&inline("go1.16", MODINFO.as_bytes())));
        assert_eq!(info.go_version, "go1.16");
        assert_eq!(
            info,
            BuildInfo {
                go_version: "go1.16".into(),
                ..BuildInfo::default()
            }
        );
        assert_eq!(go(&elf(&inline("go1.16", b""))).path, None);
    }

    #[test]
    fn unparsable_module_text_is_reported_as_go_does() {
        let cases = [
            ("mod\ta\n", "line 1: expected 2 or 3 columns; got 1"),
            (
                "path\tp\ndep\ta\tb\tc\td\n",
                "line 2: expected 2 or 3 columns; got 4",
            ),
            (
                "=>\ta\tb\tc\n",
                "line 1: replacement with no module on previous line",
            ),
            (
                "dep\ta\tb\n=>\ta\tb\tc\n=>\tx\ty\tz\n",
                "line 3: replacement with no module",
            ),
            (
                "dep\ta\tb\n=>\ta\tb\n",
                "line 2: expected 3 columns for replacement; got 2",
            ),
            ("build\t\n", "build line missing '='"),
            ("build\t=x\n", "build line with missing key"),
            ("build\tkey\n", "build line missing '=' after key"),
            ("build\tk y=1\n", "unquoted key \"k y\" must be quoted"),
            ("build\tk=a b\n", "unquoted value \"a b\" must be quoted"),
            ("build\tk=\"a\"b\n", "invalid quoted value"),
            ("build\tk=\"a\\q\"\n", "invalid quoted value"),
            ("build\tk=\"a\\'\"\n", "invalid quoted value"),
            ("build\tk=\"\\ud800\"\n", "invalid quoted value"),
            ("build\tk=\"\\400\"\n", "invalid quoted value"),
            ("build\tk=`a\n", "invalid quoted value"),
            ("build\t\"k\"\n", "build line missing '=' after quoted key"),
            (
                "build\t\"k\"x=1\n",
                "unexpected character after quoted key: 'x'",
            ),
            ("build\t\"k=1\n", "invalid quoted key"),
        ];
        for (modinfo, want) in cases {
            match read(&elf(&inline("go1.26.8", &framed(modinfo)))) {
                Binary::GoUnparsable { go_version, error } => {
                    assert_eq!(go_version, "go1.26.8");
                    assert!(error.contains(want), "{modinfo:?}: {error}");
                    assert!(error.starts_with("could not parse Go build info: line "));
                }
                other => panic!("{modinfo:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn unquotes_as_strconv_does() {
        let cases: &[(&str, &[u8])] = &[
            (r#""a\tb\n\\\"""#, b"a\tb\n\\\""),
            (r#""\x41\101\u00e9\U0001F600""#, "AAé😀".as_bytes()),
            (r#""\xff""#, b"\xff"),
            (r#""\a\b\f\v\r""#, b"\x07\x08\x0c\x0b\r"),
            ("\"é'\"", "é'".as_bytes()),
            ("`a\\n\r\"b`", b"a\\n\"b"),
            ("\"\"", b""),
        ];
        for (quoted, want) in cases {
            let (got, n) = quoted_prefix(quoted.as_bytes()).unwrap();
            assert_eq!((got.as_slice(), n), (*want, quoted.len()), "{quoted}");
        }
        // Each invalid byte becomes U+FFFD.
        let (got, _) = quoted_prefix(b"\"a\xff\xfeb\"").unwrap();
        assert_eq!(got, "a\u{fffd}\u{fffd}b".as_bytes());
        for bad in [
            "\"",
            "\"abc",
            "\"a\nb\"",
            r#""\"#,
            r#""\x4""#,
            r#""\xzz""#,
            r#""\U00110000""#,
            "'a'",
            "x",
        ] {
            assert_eq!(quoted_prefix(bad.as_bytes()), None, "{bad}");
        }
        assert_eq!(quoted_prefix(b"\"a\"=b").map(|(_, n)| n), Some(3));
    }

    #[test]
    fn corrupt_blobs_are_not_go() {
        let good = inline("go1.26.8", &framed(MODINFO));
        let mut cases = Vec::new();
        // A length beyond the file, and beyond any address.
        for len in [1u64 << 20, u64::MAX] {
            let mut d = good[..16 + HEADER].to_vec();
            varint(len, &mut d);
            d.extend_from_slice(b"go1.26.8");
            cases.push(d);
        }
        // A varint of more than 64 bits, and one cut off.
        let mut d = good[..16 + HEADER].to_vec();
        d.extend_from_slice(&[0x80; 10]);
        d.push(0x01);
        cases.push(d);
        cases.push([&good[..16 + HEADER], &[0x80u8, 0x80][..]].concat());
        // An empty version.
        cases.push(inline("", &framed(MODINFO)));
        // The magic misaligned, or without room for the header.
        cases.push([&[0u8; 8][..], &good].concat());
        cases.push(good[..16 + HEADER - 1].to_vec());
        // A pointer size Go never wrote.
        let mut d = pointers(8, false, "go1.17", b"");
        d[14] = 3;
        cases.push(d);
        for d in cases {
            assert_eq!(read(&elf(&d)), Binary::NotGo, "{d:?}");
        }
        // A second, later blob is not looked at once the first is found.
        let mut d = inline("", b"");
        d.resize(64, 0);
        d.extend(&good[16..]);
        assert_eq!(read(&elf(&d)), Binary::NotGo);
    }

    #[test]
    fn files_that_are_not_elf() {
        for bytes in [
            &b""[..],
            b"\x7fEL",
            b"#!/bin/sh\nexec server \"$@\"\n",
            b"\x7fELF\x03\x01\x01\0\0\0\0\0\0\0\0\0",
            b"MZ\x90\0",
        ] {
            assert_eq!(read(bytes), Binary::NotElf, "{bytes:?}");
        }
        // Program headers of the wrong size, or beyond the end of the file.
        let mut f = elf(&inline("go1.26.8", &framed(MODINFO)));
        f[54] = 55;
        assert_eq!(read(&f), Binary::NotElf);
        let mut f = elf(&inline("go1.26.8", &framed(MODINFO)));
        f[39] = 0xff;
        assert_eq!(read(&f), Binary::NotElf);
    }

    #[test]
    fn every_truncation_and_corruption_is_an_answer() {
        let file = elf(&inline("go1.26.8", &framed(MODINFO)));
        for len in 0..file.len() {
            assert_ne!(
                std::mem::discriminant(&read(&file[..len])),
                std::mem::discriminant(&Binary::Go(BuildInfo::default())),
                "{len}"
            );
        }
        for i in 0..file.len() {
            for b in [0x00, 0x7f, 0x80, 0xff] {
                let mut f = file.clone();
                f[i] = b;
                let _ = read(&f);
            }
        }
        let file = elf(&pointers(8, false, "go1.17", &framed(MODINFO)));
        for len in 0..=file.len() {
            let _ = read(&file[..len]);
        }
        for i in 0..file.len() {
            for b in [0x00, 0x7f, 0x80, 0xff] {
                let mut f = file.clone();
                f[i] = b;
                let _ = read(&f);
            }
        }
    }

    #[test]
    fn a_real_binary_cut_anywhere() {
        // This test program: an ELF file with section headers, and no Go in it.
        let Ok(bytes) = std::fs::read(std::env::current_exe().unwrap()) else {
            return;
        };
        if !bytes.starts_with(b"\x7fELF") {
            return;
        }
        assert_eq!(read(&bytes), Binary::NotGo);
        let step = (bytes.len() / 97).max(1);
        for len in (0..bytes.len()).step_by(step).chain(0..256) {
            assert!(matches!(
                read(&bytes[..len]),
                Binary::NotGo | Binary::NotElf
            ));
        }
    }
}
