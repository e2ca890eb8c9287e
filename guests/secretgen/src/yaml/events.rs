//! A safe wrapper over the event parser of unsafe-libyaml (libyaml 0.2.5 translated to
//! Rust: the parser of serde_yaml, and the C library Psych and hence Rails use). It yields
//! the events the tree is built from, with anchor names, tags and scalar styles.
//!
//! The unsafe code is confined here and follows serde_yaml's own wrapper: the parser lives
//! in a heap allocation that never moves, reads a borrowed input that outlives it, and every
//! event is copied out and deleted before the next one is parsed.

use std::ffi::CStr;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ptr::NonNull;

use super::YamlError;
use super::tree::Style;

/// One parsing event, owned.
pub(crate) enum Event {
    StreamStart,
    StreamEnd,
    DocumentStart,
    DocumentEnd,
    Alias {
        anchor: String,
    },
    Scalar {
        anchor: Option<String>,
        tag: Option<String>,
        value: String,
        style: Style,
    },
    SequenceStart {
        anchor: Option<String>,
        tag: Option<String>,
    },
    SequenceEnd,
    MappingStart {
        anchor: Option<String>,
        tag: Option<String>,
    },
    MappingEnd,
}

/// A libyaml parser over a UTF-8 input.
pub(crate) struct Parser<'input> {
    /// Initialised by `new`; boxed so that it never moves.
    sys: Box<MaybeUninit<unsafe_libyaml::yaml_parser_t>>,
    input: PhantomData<&'input [u8]>,
}

impl<'input> Parser<'input> {
    /// A parser reading `input`.
    pub(crate) fn new(input: &'input str) -> Result<Self, YamlError> {
        let mut parser = Box::new(MaybeUninit::<unsafe_libyaml::yaml_parser_t>::uninit());
        // SAFETY: `yaml_parser_initialize` initialises the whole struct (and frees what it
        // allocated when it fails). The input pointer stays valid for 'input, which the
        // parser cannot outlive.
        unsafe {
            let raw = parser.as_mut_ptr();
            if unsafe_libyaml::yaml_parser_initialize(raw).fail {
                return Err(YamlError::Parse(
                    "libyaml could not allocate a parser".into(),
                ));
            }
            unsafe_libyaml::yaml_parser_set_encoding(raw, unsafe_libyaml::YAML_UTF8_ENCODING);
            unsafe_libyaml::yaml_parser_set_input_string(raw, input.as_ptr(), input.len() as u64);
        }
        Ok(Self {
            sys: parser,
            input: PhantomData,
        })
    }

    /// The next event and the (0-based) line it starts on.
    pub(crate) fn next_event(&mut self) -> Result<(Event, u64), YamlError> {
        let raw = self.sys.as_mut_ptr();
        let mut event = MaybeUninit::<unsafe_libyaml::yaml_event_t>::uninit();
        // SAFETY: the parser is initialised; on success `yaml_parser_parse` initialises the
        // event, which is read, copied out and deleted here.
        unsafe {
            let failed_before = (&*raw).error != unsafe_libyaml::YAML_NO_ERROR;
            if failed_before || unsafe_libyaml::yaml_parser_parse(raw, event.as_mut_ptr()).fail {
                return Err(parse_error(raw));
            }
            let event = event.as_mut_ptr();
            let converted = convert(&*event);
            let line = (*event).start_mark.line;
            unsafe_libyaml::yaml_event_delete(event);
            Ok((converted?, line))
        }
    }
}

impl Drop for Parser<'_> {
    fn drop(&mut self) {
        // SAFETY: the parser was initialised by `new` and is deleted once.
        unsafe { unsafe_libyaml::yaml_parser_delete(self.sys.as_mut_ptr()) }
    }
}

/// The parser's error, with its position.
///
/// # Safety
/// `parser` is an initialised parser that failed.
unsafe fn parse_error(parser: *const unsafe_libyaml::yaml_parser_t) -> YamlError {
    // SAFETY: libyaml's problem and context are null or static C strings.
    let (problem, context, mark) = unsafe {
        let parser = &*parser;
        (
            c_string(parser.problem.cast()),
            c_string(parser.context.cast()),
            parser.problem_mark,
        )
    };
    let problem = problem.unwrap_or_else(|| "unknown error".to_owned());
    let context = context.map(|c| format!("{c}: ")).unwrap_or_default();
    YamlError::Parse(format!(
        "{context}{problem} at line {} column {}",
        mark.line + 1,
        mark.column + 1
    ))
}

/// Copies an event out of libyaml.
///
/// # Safety
/// `event` was initialised by a successful `yaml_parser_parse`.
unsafe fn convert(event: &unsafe_libyaml::yaml_event_t) -> Result<Event, YamlError> {
    // SAFETY: the union member read is the one the event type names; anchors, tags and
    // values are null or valid for the event's lifetime.
    unsafe {
        Ok(match event.type_ {
            unsafe_libyaml::YAML_STREAM_START_EVENT => Event::StreamStart,
            unsafe_libyaml::YAML_STREAM_END_EVENT => Event::StreamEnd,
            unsafe_libyaml::YAML_DOCUMENT_START_EVENT => Event::DocumentStart,
            unsafe_libyaml::YAML_DOCUMENT_END_EVENT => Event::DocumentEnd,
            unsafe_libyaml::YAML_ALIAS_EVENT => Event::Alias {
                anchor: c_string(event.data.alias.anchor)
                    .ok_or_else(|| YamlError::Parse("an alias without a name".into()))?,
            },
            unsafe_libyaml::YAML_SCALAR_EVENT => {
                let scalar = &event.data.scalar;
                let bytes = if scalar.value.is_null() {
                    &[][..]
                } else {
                    std::slice::from_raw_parts(scalar.value, scalar.length as usize)
                };
                Event::Scalar {
                    anchor: c_string(scalar.anchor),
                    tag: c_string(scalar.tag),
                    value: String::from_utf8(bytes.to_vec())
                        .map_err(|_| YamlError::Parse("a scalar that is not UTF-8".into()))?,
                    style: match scalar.style {
                        unsafe_libyaml::YAML_SINGLE_QUOTED_SCALAR_STYLE => Style::SingleQuoted,
                        unsafe_libyaml::YAML_DOUBLE_QUOTED_SCALAR_STYLE => Style::DoubleQuoted,
                        unsafe_libyaml::YAML_LITERAL_SCALAR_STYLE => Style::Literal,
                        unsafe_libyaml::YAML_FOLDED_SCALAR_STYLE => Style::Folded,
                        _ => Style::Plain,
                    },
                }
            }
            unsafe_libyaml::YAML_SEQUENCE_START_EVENT => Event::SequenceStart {
                anchor: c_string(event.data.sequence_start.anchor),
                tag: c_string(event.data.sequence_start.tag),
            },
            unsafe_libyaml::YAML_SEQUENCE_END_EVENT => Event::SequenceEnd,
            unsafe_libyaml::YAML_MAPPING_START_EVENT => Event::MappingStart {
                anchor: c_string(event.data.mapping_start.anchor),
                tag: c_string(event.data.mapping_start.tag),
            },
            unsafe_libyaml::YAML_MAPPING_END_EVENT => Event::MappingEnd,
            _ => return Err(YamlError::Parse("an unexpected libyaml event".into())),
        })
    }
}

/// Copies a NUL-terminated string, none for a null pointer.
///
/// # Safety
/// `ptr` is null or a valid NUL-terminated string.
unsafe fn c_string(ptr: *const u8) -> Option<String> {
    let ptr = NonNull::new(ptr.cast_mut())?;
    // SAFETY: see the function's contract.
    let c = unsafe { CStr::from_ptr(ptr.as_ptr().cast()) };
    Some(c.to_string_lossy().into_owned())
}
