//! The translation cache on disk: the machine code of translated blocks, kept between processes so that the
//! second run of a program translates nothing.
//!
//! One file per block, `DIR/ab/abcdef0123456789.wjb`, named by a hash of its [`BlockKey`]: the block's
//! instruction words, its offset from the code base, the target, whether it observes, and the *build*
//! fingerprint — this build's code generator (a hash of the sources of the crates that decide what a block
//! compiles to, made by build.rs, and the wavejit version) and the host CPU Cranelift compiled for (triple and
//! ISA flags). The code holds no address of the process that made it ([`crate::reloc`]); the loading process
//! writes its own in. Nor does it depend on where the code object is loaded (PCs are relative to the code base,
//! and the instructions that write a PC into registers run on the interpreter: `compile::materializes_pc`).
//!
//! # Trust
//! A block file is machine code the loading process maps and runs, so only files this user's own processes
//! wrote are used. The directory is created with mode 0700 and used only while it belongs to the user and
//! neither group nor others may write it; beside the blocks, `DIR/key` holds a secret of 32 random bytes,
//! created once (mode 0600, exclusively) and used only while it is the user's own regular file that neither
//! group nor others may read or write. Each block file ends in an HMAC-SHA256 of its contents under that key.
//! A directory or key file that breaks these rules turns the disk cache off for the process, with a one-line
//! warning on stderr ([`DiskCache::open_or_warn`]); a file whose code does not carry the key's MAC is ignored,
//! whatever else about it is right (its public hashes can be computed by anyone, a MAC cannot).
//!
//! # Sharing and size
//! Safe under concurrent processes: a file is written under a temporary name and renamed into place, so a
//! reader sees a whole file or none. Nothing read is trusted: a file whose magic, length, MAC, key or call
//! table disagrees with the block being loaded is ignored (the block is translated and the file replaced).
//! The directory is bounded: when it outgrows its limit the least recently used files go (a hit refreshes a
//! file's modification time).

use std::fs::{File, Metadata};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use cranelift_codegen::binemit::Reloc;
use cranelift_codegen::ir::LibCall;
use cranelift_codegen::isa::TargetIsa;
use hmac::{KeyInit, Mac};
use isa_amdgpu::{Inst, Target};

use crate::call::Call;
use crate::reloc::{Code, Relocation, Target as RelocTarget};

/// File format version (the first bytes of every file: `WJBLK`, three zero bytes, then this).
const FORMAT: u32 = 2;
const MAGIC: &[u8; 8] = b"WJBLK\0\0\0";
/// The extension of block files; temporary files start with `tmp.`.
const EXT: &str = "wjb";
/// The key file in the cache directory, and the bytes of the key.
pub const KEY_FILE: &str = "key";
const KEY_BYTES: usize = 32;
/// The MAC that ends every block file: HMAC-SHA256 under the user's key.
type BlockMac = hmac::Hmac<sha2::Sha256>;
const MAC_BYTES: usize = 32;
/// Temporary files older than this are left over from a process that died while writing; eviction removes them.
const STALE_TMP: Duration = Duration::from_secs(3600);

/// The default size bound.
pub const DEFAULT_MAX_BYTES: u64 = 512 << 20;

/// Where the cache lives and how large it may grow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiskConfig {
    pub dir: PathBuf,
    pub max_bytes: u64,
}

impl DiskConfig {
    /// `$WAVEJIT_CACHE` (a directory; `off` or an empty value: no disk cache), else `$XDG_CACHE_HOME/wavejit`,
    /// else `~/.cache/wavejit`; bounded by `$WAVEJIT_CACHE_MB` mebibytes (default 512).
    pub fn from_env() -> Option<DiskConfig> {
        let dir = match std::env::var_os("WAVEJIT_CACHE") {
            Some(d) if d.is_empty() || d == "off" || d == "0" => return None,
            Some(d) => PathBuf::from(d),
            None => match std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
                Some(x) => PathBuf::from(x).join("wavejit"),
                None => PathBuf::from(std::env::var_os("HOME")?).join(".cache/wavejit"),
            },
        };
        let max_bytes = std::env::var("WAVEJIT_CACHE_MB")
            .ok()
            .and_then(|m| m.trim().parse::<u64>().ok())
            .map_or(DEFAULT_MAX_BYTES, |m| m << 20);
        Some(DiskConfig { dir, max_bytes })
    }
}

/// What a cached block is for: everything its code depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockKey {
    pub target: Target,
    pub observed: crate::compile::Observed,
    /// The block's first PC relative to the code base.
    pub offset: u64,
    /// The instruction words of the block, in order.
    pub words: Vec<u32>,
}

impl BlockKey {
    pub fn of(insts: &[Inst], offset: u64, observed: crate::compile::Observed) -> BlockKey {
        let target = insts.first().map_or(Target::Gfx90a, |i| i.target);
        BlockKey {
            target,
            observed,
            offset,
            words: insts.iter().flat_map(|i| i.words().iter().copied()).collect(),
        }
    }

    fn write(&self, out: &mut Vec<u8>) {
        out.push(self.target as u8);
        out.push(self.observed.tag() as u8);
        out.extend_from_slice(&self.offset.to_le_bytes());
        out.extend_from_slice(&(self.words.len() as u32).to_le_bytes());
        for w in &self.words {
            out.extend_from_slice(&w.to_le_bytes());
        }
    }
}

/// A 64-bit hash (multiply-rotate over 8-byte words; for file names and fingerprints, not against an adversary:
/// block files are authenticated by their MAC).
pub fn hash(bytes: &[u8], seed: u64) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = seed ^ (bytes.len() as u64).wrapping_mul(K);
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        h = (h ^ w).wrapping_mul(K).rotate_left(29);
    }
    let mut tail = [0u8; 8];
    tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    h = (h ^ u64::from_le_bytes(tail)).wrapping_mul(K);
    h ^ h >> 32
}

/// A hash of a block's interpreter calls (operation, instruction offset, operand count) and symbol count: a
/// cached block is only used with the calls its code was made for.
pub fn calls_fingerprint(calls: &[Box<Call>], symbols: usize) -> u64 {
    let mut text = format!("{symbols}");
    for c in calls {
        text.push_str(&format!(";{:?}@{}/{}", c.op, c.offset, c.vectors_in));
    }
    hash(text.as_bytes(), 0x63616c6c)
}

/// The fingerprint of this build's code generator for `isa`: the sources build.rs hashed, the wavejit version,
/// whether debug assertions are on, and the host triple and ISA flags.
pub fn build_fingerprint(isa: &dyn TargetIsa) -> u64 {
    let mut text = format!(
        "{}|{}|{}|{}|{}",
        env!("WAVEJIT_CODEGEN_HASH"),
        env!("CARGO_PKG_VERSION"),
        cfg!(debug_assertions),
        isa.triple(),
        isa.flags()
    );
    for f in isa.isa_flags() {
        text.push_str(&format!("|{f}"));
    }
    hash(text.as_bytes(), 0x6275696c64)
}

/// Why a file was not used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Miss {
    /// No file.
    Absent,
    /// A file that is not a whole, intact block file of this format made under this user's key (truncated,
    /// corrupted, another format, planted).
    Corrupt,
    /// An intact file for another block, build or call table.
    Mismatch,
}

/// The relocation kinds kept on disk, by number.
const KINDS: [Reloc; 4] = [Reloc::Abs8, Reloc::Abs4, Reloc::X86PCRel4, Reloc::X86CallPCRel4];

/// Why a cache directory is not used.
#[derive(Debug, thiserror::Error)]
pub enum DiskError {
    #[error("translation cache {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("translation cache {path} is not private to this user ({why})")]
    NotPrivate { path: PathBuf, why: String },
    #[error("translation cache key {path}: {len} bytes, not {KEY_BYTES} (remove it and a new key is made)")]
    BadKey { path: PathBuf, len: usize },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> DiskError + '_ {
    move |source| DiskError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// What the trust rules apply to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Private {
    /// The cache directory: a directory of the user that neither group nor others may write.
    Dir,
    /// The key file: a regular file of the user that neither group nor others may read or write.
    Key,
}

/// Why a directory or key file with metadata `meta` may not serve user `uid` (`None`: it may).
pub fn not_private(what: Private, meta: &Metadata, uid: u32) -> Option<String> {
    let mode = meta.mode() & 0o7777;
    let (kind_ok, kind, forbidden) = match what {
        Private::Dir => (meta.is_dir(), "not a directory", 0o022),
        Private::Key => (meta.is_file(), "not a regular file", 0o077),
    };
    if !kind_ok {
        Some(kind.to_string())
    } else if meta.uid() != uid {
        Some(format!("owned by uid {}, not {uid}", meta.uid()))
    } else if mode & forbidden != 0 {
        Some(format!(
            "mode {mode:o}: {} may {}",
            if mode & forbidden & 0o070 != 0 {
                "its group"
            } else {
                "others"
            },
            if what == Private::Dir {
                "write it"
            } else {
                "read or write it"
            }
        ))
    } else {
        None
    }
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Creates `dir` (mode 0700; its missing parents as `create_dir_all` makes them) and checks it is private to
/// this user.
fn private_dir(dir: &Path) -> Result<(), DiskError> {
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(io(dir)(e)),
        _ => {}
    }
    let meta = std::fs::metadata(dir).map_err(io(dir))?;
    match not_private(Private::Dir, &meta, euid()) {
        Some(why) => Err(DiskError::NotPrivate {
            path: dir.to_path_buf(),
            why,
        }),
        None => Ok(()),
    }
}

/// The key of the private directory `dir`, made if it has none.
fn key_of(dir: &Path) -> Result<[u8; KEY_BYTES], DiskError> {
    let path = dir.join(KEY_FILE);
    if let Some(k) = read_key(&path)? {
        return Ok(k);
    }
    // written whole under a name of this process (created exclusively, 0600), then linked into place, which
    // fails if another process made the key meanwhile: every process of the user ends up with the same key
    let tmp = dir.join(format!(
        "tmp.key.{}.{}",
        std::process::id(),
        TMP.fetch_add(1, Ordering::Relaxed)
    ));
    let mut key = [0u8; KEY_BYTES];
    File::open("/dev/urandom")
        .and_then(|mut r| r.read_exact(&mut key))
        .map_err(io(Path::new("/dev/urandom")))?;
    let made = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| f.write_all(&key))
        .and_then(|()| std::fs::hard_link(&tmp, &path));
    let _ = std::fs::remove_file(&tmp);
    match made {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io(&path)(e)),
    }
    read_key(&path)?.ok_or_else(|| io(&path)(std::io::ErrorKind::NotFound.into()))
}

/// The key in `path` if there is a file (`None`: there is none), checked to be private to this user.
fn read_key(path: &Path) -> Result<Option<[u8; KEY_BYTES]>, DiskError> {
    let f = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(DiskError::NotPrivate {
                path: path.to_path_buf(),
                why: "a symbolic link".into(),
            })
        }
        Err(e) => return Err(io(path)(e)),
    };
    let meta = f.metadata().map_err(io(path))?;
    if let Some(why) = not_private(Private::Key, &meta, euid()) {
        return Err(DiskError::NotPrivate {
            path: path.to_path_buf(),
            why,
        });
    }
    let mut bytes = Vec::with_capacity(KEY_BYTES);
    f.take(KEY_BYTES as u64 + 1).read_to_end(&mut bytes).map_err(io(path))?;
    let len = bytes.len();
    let key = bytes.try_into().map_err(|_| DiskError::BadKey {
        path: path.to_path_buf(),
        len,
    })?;
    Ok(Some(key))
}

/// The cache directory of one JIT.
pub struct DiskCache {
    config: DiskConfig,
    build: u64,
    /// This user's key, which the MAC of every block file is made under.
    key: [u8; KEY_BYTES],
    /// Bytes in the directory as this process knows them (`None` until it first writes and scans).
    size: Mutex<Option<u64>>,
}

/// Numbers the temporary files of this process.
static TMP: AtomicU64 = AtomicU64::new(0);

/// The directories this process has warned about.
static WARNED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

impl DiskCache {
    /// The cache in `config.dir` for code made by `isa`: creates the directory (mode 0700) and the key if
    /// missing; an error if the directory or the key file is not private to this user or cannot be made.
    pub fn open(config: DiskConfig, isa: &dyn TargetIsa) -> Result<DiskCache, DiskError> {
        private_dir(&config.dir)?;
        let key = key_of(&config.dir)?;
        Ok(DiskCache {
            config,
            build: build_fingerprint(isa),
            key,
            size: Mutex::new(None),
        })
    }

    /// [`Self::open`], or `None` after a one-line warning on stderr (once per directory and process): the
    /// JIT then keeps its translations in memory only.
    pub fn open_or_warn(config: DiskConfig, isa: &dyn TargetIsa) -> Option<DiskCache> {
        let dir = config.dir.clone();
        match DiskCache::open(config, isa) {
            Ok(c) => Some(c),
            Err(e) => {
                let mut warned = WARNED.lock().unwrap_or_else(|e| e.into_inner());
                if !warned.contains(&dir) {
                    eprintln!("wavejit: warning: {e}; not using the disk cache");
                    warned.push(dir);
                }
                None
            }
        }
    }

    pub fn config(&self) -> &DiskConfig {
        &self.config
    }

    /// The file of `key`.
    pub fn path(&self, key: &BlockKey) -> PathBuf {
        let mut k = Vec::with_capacity(16 + 4 * key.words.len());
        key.write(&mut k);
        let h = hash(&k, self.build);
        self.config
            .dir
            .join(format!("{:02x}", h >> 56))
            .join(format!("{h:016x}.{EXT}"))
    }

    /// Whether a file for `key` exists (it may still turn out unusable).
    pub fn contains(&self, key: &BlockKey) -> bool {
        self.path(key).is_file()
    }

    /// The code cached for `key`, made for calls with fingerprint `calls`.
    pub fn load(&self, key: &BlockKey, calls: u64) -> Result<Code, Miss> {
        let path = self.path(key);
        let mut f = File::open(&path).map_err(|_| Miss::Absent)?;
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).map_err(|_| Miss::Corrupt)?;
        let code = decode(&bytes, &self.key, self.build, key, calls)?;
        // a hit makes the file recently used (eviction takes the least recently used first)
        let _ = f.set_modified(SystemTime::now());
        Ok(code)
    }

    /// Keeps `code` for `key` (made for calls with fingerprint `calls`); errors are ignored (the cache is an
    /// optimization): a full disk or a read-only directory only means the next run translates again.
    pub fn store(&self, key: &BlockKey, calls: u64, code: &Code) {
        let Some(bytes) = encode(&self.key, self.build, key, calls, code) else {
            return;
        };
        let path = self.path(key);
        let Some(dir) = path.parent() else { return };
        if std::fs::create_dir_all(dir).is_err() {
            return;
        }
        let tmp = dir.join(format!(
            "tmp.{}.{}",
            std::process::id(),
            TMP.fetch_add(1, Ordering::Relaxed)
        ));
        let written = File::create(&tmp).and_then(|mut f| f.write_all(&bytes));
        if written.is_err() || std::fs::rename(&tmp, &path).is_err() {
            let _ = std::fs::remove_file(&tmp);
            return;
        }
        self.account(bytes.len() as u64);
    }

    /// Adds `bytes` written to what this process knows of the directory's size, and evicts when it is over its
    /// bound (the first write scans the directory).
    fn account(&self, bytes: u64) {
        let mut size = self.size.lock().unwrap_or_else(|e| e.into_inner());
        let known = match *size {
            Some(s) => s + bytes,
            None => self.evict(),
        };
        *size = Some(if known > self.config.max_bytes {
            self.evict()
        } else {
            known
        });
    }

    /// Removes the least recently used block files until the directory is within 3/4 of its bound (and
    /// temporary files left by processes that died while writing); returns the bytes left.
    pub fn evict(&self) -> u64 {
        let now = SystemTime::now();
        let mut files = Vec::new();
        let Ok(subdirs) = std::fs::read_dir(&self.config.dir) else {
            return 0;
        };
        for sub in subdirs.flatten() {
            let Ok(entries) = std::fs::read_dir(sub.path()) else {
                continue;
            };
            for e in entries.flatten() {
                let Ok(meta) = e.metadata() else { continue };
                let modified = meta.modified().unwrap_or(now);
                let name = e.file_name();
                let name = name.to_string_lossy();
                if name.starts_with("tmp.") {
                    if now.duration_since(modified).is_ok_and(|age| age > STALE_TMP) {
                        let _ = std::fs::remove_file(e.path());
                    }
                } else if name.ends_with(EXT) && meta.is_file() {
                    files.push((modified, meta.len(), e.path()));
                }
            }
        }
        let mut total: u64 = files.iter().map(|f| f.1).sum();
        if total > self.config.max_bytes {
            files.sort_by_key(|f| f.0);
            let goal = self.config.max_bytes / 4 * 3;
            for (_, len, path) in files {
                if total <= goal {
                    break;
                }
                // another process may have removed or replaced it meanwhile: either way it is not ours to count
                if std::fs::remove_file(&path).is_ok() {
                    total -= len;
                }
            }
        }
        total
    }

    /// The bytes of block files in the directory.
    pub fn size_on_disk(dir: &Path) -> u64 {
        let mut total = 0;
        for sub in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            for e in std::fs::read_dir(sub.path()).into_iter().flatten().flatten() {
                if e.file_name().to_string_lossy().ends_with(EXT) {
                    total += e.metadata().map_or(0, |m| m.len());
                }
            }
        }
        total
    }
}

/// The MAC of `body` under `secret`.
fn mac(secret: &[u8; KEY_BYTES], body: &[u8]) -> BlockMac {
    let mut m = <BlockMac as KeyInit>::new_from_slice(secret).expect("HMAC takes keys of any length");
    m.update(body);
    m
}

/// A block file: magic, format, build fingerprint, key, calls fingerprint, alignment, code, relocations, and
/// the MAC of everything before it under `secret`. `None` if the code has a relocation kind the format does not
/// keep.
fn encode(secret: &[u8; KEY_BYTES], build: u64, key: &BlockKey, calls: u64, code: &Code) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(code.bytes.len() + 88 + 4 * key.words.len() + 24 * code.relocs.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(&build.to_le_bytes());
    key.write(&mut out);
    out.extend_from_slice(&calls.to_le_bytes());
    out.extend_from_slice(&code.align.to_le_bytes());
    out.extend_from_slice(&(code.bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(&code.bytes);
    out.extend_from_slice(&(code.relocs.len() as u32).to_le_bytes());
    for r in &code.relocs {
        let kind = KINDS.iter().position(|k| *k == r.kind)?;
        out.extend_from_slice(&r.offset.to_le_bytes());
        out.push(kind as u8);
        let (tag, value) = match &r.target {
            RelocTarget::Sym(i) => (0u8, *i as u64),
            RelocTarget::SelfOffset(o) => (1, *o as u64),
            RelocTarget::LibCall(l) => (2, hash(l.to_string().as_bytes(), 0)),
        };
        out.push(tag);
        out.extend_from_slice(&value.to_le_bytes());
        if let RelocTarget::LibCall(l) = &r.target {
            let name = l.to_string();
            out.push(name.len() as u8);
            out.extend_from_slice(name.as_bytes());
        }
        out.extend_from_slice(&r.addend.to_le_bytes());
    }
    let tag = mac(secret, &out).finalize().into_bytes();
    out.extend_from_slice(&tag);
    Some(out)
}

/// Reads little-endian fields off a byte slice; any read past the end is `Miss::Corrupt`.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Miss> {
        if self.0.len() < n {
            return Err(Miss::Corrupt);
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, Miss> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, Miss> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    fn u64(&mut self) -> Result<u64, Miss> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
}

/// The code of a block file, if it carries the MAC under `secret` and is for `key` with calls `calls` under
/// `build`.
fn decode(bytes: &[u8], secret: &[u8; KEY_BYTES], build: u64, key: &BlockKey, calls: u64) -> Result<Code, Miss> {
    if bytes.len() < 8 + 4 + 8 + MAC_BYTES || &bytes[..8] != MAGIC {
        return Err(Miss::Corrupt);
    }
    let (body, tag) = bytes.split_at(bytes.len() - MAC_BYTES);
    // (a comparison in constant time)
    if mac(secret, body).verify_slice(tag).is_err() {
        return Err(Miss::Corrupt);
    }
    let mut r = Reader(&body[8..]);
    if r.u32()? != FORMAT || r.u64()? != build {
        return Err(Miss::Mismatch);
    }
    let mut want = Vec::new();
    key.write(&mut want);
    if r.take(want.len())? != want.as_slice() || r.u64()? != calls {
        return Err(Miss::Mismatch);
    }
    let align = r.u64()?;
    let len = r.u32()? as usize;
    let code = r.take(len)?.to_vec();
    let n = r.u32()? as usize;
    let mut relocs = Vec::with_capacity(n.min(1 << 16));
    for _ in 0..n {
        let offset = r.u32()?;
        let kind = *KINDS.get(r.u8()? as usize).ok_or(Miss::Corrupt)?;
        let tag = r.u8()?;
        let value = r.u64()?;
        let target = match tag {
            0 => RelocTarget::Sym(u32::try_from(value).map_err(|_| Miss::Corrupt)?),
            1 => RelocTarget::SelfOffset(u32::try_from(value).map_err(|_| Miss::Corrupt)?),
            2 => {
                let len = r.u8()? as usize;
                let name = std::str::from_utf8(r.take(len)?).map_err(|_| Miss::Corrupt)?;
                RelocTarget::LibCall(name.parse::<LibCall>().map_err(|_| Miss::Mismatch)?)
            }
            _ => return Err(Miss::Corrupt),
        };
        let addend = r.u64()? as i64;
        if offset as usize >= code.len() {
            return Err(Miss::Corrupt);
        }
        relocs.push(Relocation {
            offset,
            kind,
            target,
            addend,
        });
    }
    if !r.0.is_empty() {
        return Err(Miss::Corrupt);
    }
    Ok(Code {
        bytes: code,
        align,
        relocs,
        persistable: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code() -> Code {
        Code {
            bytes: (0..64u8).collect(),
            align: 16,
            relocs: vec![
                Relocation {
                    offset: 2,
                    kind: Reloc::Abs8,
                    target: RelocTarget::Sym(5),
                    addend: 24,
                },
                Relocation {
                    offset: 20,
                    kind: Reloc::Abs8,
                    target: RelocTarget::LibCall(LibCall::FmaF32),
                    addend: 0,
                },
            ],
            persistable: true,
        }
    }

    fn key() -> BlockKey {
        BlockKey {
            target: Target::Gfx90a,
            observed: crate::compile::Observed::No,
            offset: 0x100,
            words: vec![0xbf810000, 0x7e000280],
        }
    }

    const SECRET: [u8; KEY_BYTES] = [7; KEY_BYTES];

    #[test]
    fn a_block_file_reads_back_only_for_its_own_key_build_and_calls() {
        let bytes = encode(&SECRET, 7, &key(), 9, &code()).unwrap();
        assert_eq!(decode(&bytes, &SECRET, 7, &key(), 9), Ok(code()));
        assert_eq!(
            decode(&bytes, &SECRET, 8, &key(), 9),
            Err(Miss::Mismatch),
            "another build"
        );
        assert_eq!(
            decode(&bytes, &SECRET, 7, &key(), 10),
            Err(Miss::Mismatch),
            "other calls"
        );
        let other = BlockKey { offset: 0x104, ..key() };
        assert_eq!(
            decode(&bytes, &SECRET, 7, &other, 9),
            Err(Miss::Mismatch),
            "another block"
        );
    }

    #[test]
    fn every_truncation_and_every_flipped_bit_of_a_block_file_is_refused() {
        let bytes = encode(&SECRET, 7, &key(), 9, &code()).unwrap();
        for n in 0..bytes.len() {
            assert_eq!(
                decode(&bytes[..n], &SECRET, 7, &key(), 9).err(),
                Some(Miss::Corrupt),
                "truncated to {n}"
            );
        }
        for i in 0..bytes.len() * 8 {
            let mut b = bytes.clone();
            b[i / 8] ^= 1 << (i % 8);
            assert_eq!(
                decode(&b, &SECRET, 7, &key(), 9).err(),
                Some(Miss::Corrupt),
                "bit {i} flipped"
            );
        }
    }

    #[test]
    fn a_block_file_sealed_under_another_key_or_with_a_public_checksum_is_refused() {
        let good = encode(&SECRET, 7, &key(), 9, &code()).unwrap();
        let body = &good[..good.len() - MAC_BYTES];
        // what anyone can compute without the key: the file under a key of their own, and the body followed by
        // public hashes of it in place of the MAC (the 64-bit hash, repeated to fill it; SHA-256)
        let mut forgeries = vec![encode(&[8; KEY_BYTES], 7, &key(), 9, &code()).unwrap()];
        let public = hash(body, 0x73756d).to_le_bytes();
        forgeries.push([body, &public].concat());
        forgeries.push([body, &public.repeat(MAC_BYTES / 8)].concat());
        use sha2::Digest;
        forgeries.push([body, sha2::Sha256::digest(body).as_slice()].concat());
        for (i, f) in forgeries.iter().enumerate() {
            assert_eq!(decode(f, &SECRET, 7, &key(), 9), Err(Miss::Corrupt), "forgery {i}");
        }
    }

    #[test]
    fn the_trust_rules_refuse_another_users_directory_or_key_and_access_by_group_or_others() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("wavejit-disk-rules-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        let file = dir.join("key");
        std::fs::write(&file, [0u8; KEY_BYTES]).unwrap();
        let me = euid();
        let rule = |what, path: &Path, mode: u32, uid: u32| {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
            not_private(what, &std::fs::metadata(path).unwrap(), uid)
        };
        // the directory: the user's own, which group and others may read but not write
        for mode in [0o700, 0o750, 0o755] {
            assert_eq!(rule(Private::Dir, &dir, mode, me), None, "{mode:o}");
        }
        for mode in [0o770, 0o702, 0o777, 0o1777] {
            let why = rule(Private::Dir, &dir, mode, me).unwrap();
            assert!(why.starts_with(&format!("mode {mode:o}")), "{why}");
        }
        let other = me.wrapping_add(1);
        assert_eq!(
            rule(Private::Dir, &dir, 0o700, other),
            Some(format!("owned by uid {me}, not {other}"))
        );
        assert_eq!(rule(Private::Dir, &file, 0o600, me).as_deref(), Some("not a directory"));
        // the key: the user's own regular file, which nobody else may read or write
        assert_eq!(rule(Private::Key, &file, 0o600, me), None);
        assert_eq!(rule(Private::Key, &file, 0o400, me), None);
        for mode in [0o640, 0o604, 0o620, 0o602, 0o644] {
            assert!(rule(Private::Key, &file, mode, me).is_some(), "{mode:o}");
        }
        assert!(rule(Private::Key, &file, 0o600, other)
            .unwrap()
            .starts_with("owned by uid"));
        assert_eq!(
            rule(Private::Key, &dir, 0o700, me).as_deref(),
            Some("not a regular file")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
