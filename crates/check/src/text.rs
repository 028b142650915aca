//! `Text`, the characters of a Str (a literal in the HIR, a `Str` value
//! at run time): a `String` that knows whether it is all ASCII, so that a
//! character index, a slice and a length are byte arithmetic on an ASCII
//! Str (spec §10.7: expected O(1)) instead of a walk over its characters.
//! The flag is a function of the characters, kept true by every way of
//! making or changing one (there is no `DerefMut`).

use std::fmt;
use std::ops::Deref;

#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Text {
    // `s` first: the derived order and equality are the String's (the
    // flag is determined by it).
    s: String,
    ascii: bool,
}

impl Text {
    pub fn new(s: String) -> Text {
        let ascii = s.is_ascii();
        Text { s, ascii }
    }

    /// Whether every character is ASCII (then character = byte).
    pub fn is_ascii(&self) -> bool {
        self.ascii
    }

    /// The number of characters.
    pub fn char_len(&self) -> usize {
        if self.ascii {
            self.s.len()
        } else {
            self.s.chars().count()
        }
    }

    /// Appends the characters of `t` (its ASCII flag known, not scanned;
    /// one byte, the usual tail of a loop that builds a Str, is pushed as
    /// a byte).
    pub fn push_text(&mut self, t: &Text) {
        match t.s.as_bytes() {
            // A one-byte UTF-8 string is an ASCII character.
            [b] => self.s.push(char::from(*b)),
            _ => self.s.push_str(&t.s),
        }
        self.ascii = self.ascii && t.ascii;
    }

    /// Room for `additional` more bytes (`String::try_reserve`).
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), std::collections::TryReserveError> {
        self.s.try_reserve(additional)
    }

    pub fn into_string(self) -> String {
        self.s
    }
}

impl Deref for Text {
    type Target = String;

    fn deref(&self) -> &String {
        &self.s
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text::new(s)
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text::new(s.to_string())
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.s, f)
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.s, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_follows_the_characters() {
        let mut t = Text::from("abc");
        assert!(t.is_ascii());
        assert_eq!(t.char_len(), 3);
        t.push_text(&Text::from("d"));
        assert!(t.is_ascii());
        t.push_text(&Text::from("é"));
        assert!(!t.is_ascii());
        assert_eq!(t.char_len(), 5);
        assert_eq!(t.len(), 6);
        t.push_text(&Text::from("f"));
        assert!(!t.is_ascii());
        // `push_text`: one byte, several, and a non-ASCII tail.
        let mut u = Text::from("ab");
        u.push_text(&Text::from("c"));
        u.push_text(&Text::from("de"));
        assert!(u.is_ascii());
        assert_eq!(u.as_str(), "abcde");
        u.push_text(&Text::from("é"));
        u.push_text(&Text::from("g"));
        assert_eq!((u.as_str(), u.is_ascii(), u.char_len()), ("abcdeég", false, 7));
        assert_eq!(Text::from("aé".to_string()), Text::new("aé".into()));
        assert!(Text::from("a") < Text::from("b"));
    }
}
