//! The TextMate grammar editors highlight with (`editors/twill.tmLanguage.json`)
//! agrees with the language: it is valid JSON whose regexes name every
//! keyword of the lexer and every dtype, and its constants are the
//! checker's constants and constructors.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

/// The words of a `\b(a|b|c)\b` pattern.
fn words(pattern: &str) -> Vec<String> {
    let inner = pattern.trim_start_matches("\\b(").trim_end_matches(")\\b");
    inner.split('|').map(str::to_string).collect()
}

#[test]
fn the_grammar_names_every_keyword_dtype_and_constant() {
    let text = include_str!("../../../editors/twill.tmLanguage.json");
    let g: serde_json::Value = serde_json::from_str(text).unwrap();
    let repo = &g["repository"];
    let mut keywords: Vec<String> = Vec::new();
    for p in repo["keyword"]["patterns"].as_array().unwrap() {
        keywords.extend(words(p["match"].as_str().unwrap()));
    }
    let constants: Vec<Vec<String>> = repo["constant"]["patterns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| words(p["match"].as_str().unwrap()))
        .collect();
    for kw in twill_syntax::lexer::KEYWORDS {
        assert!(
            keywords.iter().any(|k| k == kw) || constants[0].iter().any(|k| k == kw),
            "keyword `{kw}` is not highlighted"
        );
    }
    for k in &keywords {
        assert!(
            twill_syntax::lexer::KEYWORDS.contains(&k.as_str()),
            "`{k}` is not a keyword"
        );
    }
    let dtypes = words(repo["dtype"]["match"].as_str().unwrap());
    let names: Vec<&str> = twill_tensor::DType::ALL.iter().map(|d| d.name()).collect();
    assert_eq!(dtypes, names);
    for c in &constants[1] {
        assert!(
            twill_check::builtins::Constant::from_name(c).is_some()
                || twill_check::builtins::Builtin::from_name(c).is_some(),
            "`{c}` is neither a constant nor a constructor"
        );
    }
}
