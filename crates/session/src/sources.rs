//! The source map: every text the session has parsed (the standard
//! library's files, the program, each REPL entry), by [`FileId`]. Spans
//! carry only the id; the name and the text for rendering come from here.

use twill_syntax::FileId;

/// One source file: the name diagnostics show (`prog.tw`, `<stdin>`,
/// `<stdlib>/nn.tw`, `<repl>`) and its text.
#[derive(Clone, Debug)]
pub struct Source {
    pub name: String,
    pub text: String,
}

/// The files of one session. Id 0 is never handed out: it is the file of
/// `Span::default()`, a span made without a source (inside a kernel, say),
/// so such a span is known to point nowhere rather than into a real file.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    files: Vec<Source>,
}

impl SourceMap {
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    /// Registers a file and returns its id.
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        self.files.push(Source {
            name: name.into(),
            text: text.into(),
        });
        // Four billion files would exhaust memory long before the ids.
        FileId(u32::try_from(self.files.len()).unwrap_or(u32::MAX))
    }

    /// The file `id` names, if it is one of this map's.
    pub fn get(&self, id: FileId) -> Option<&Source> {
        let index = (id.0 as usize).checked_sub(1)?;
        self.files.get(index)
    }

    /// Every file with its id, in the order they were added.
    pub fn iter(&self) -> impl Iterator<Item = (FileId, &Source)> {
        self.files
            .iter()
            .enumerate()
            .map(|(i, s)| (FileId(u32::try_from(i + 1).unwrap_or(u32::MAX)), s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_name_their_files_and_the_default_id_names_none() {
        let mut map = SourceMap::new();
        let a = map.add("a.tw", "1");
        let b = map.add("b.tw", "2");
        assert_ne!(a, b);
        assert_eq!(map.get(a).map(|s| s.name.as_str()), Some("a.tw"));
        assert_eq!(map.get(b).map(|s| s.text.as_str()), Some("2"));
        assert!(map.get(FileId::default()).is_none());
        assert_eq!(map.iter().map(|(id, _)| id).collect::<Vec<_>>(), vec![a, b]);
    }
}
