//! The metadata event: which classes exist and how their fields are laid out. Every value
//! in a chunk is decoded (or skipped) by walking these descriptions.

use crate::cursor::{Cursor, RawStr};
use crate::Malformed;

/// Element nesting deeper than this is not something the JDK writes (it uses 4 levels).
const MAX_ELEMENT_DEPTH: u32 = 16;
/// Values nested deeper than this (inline structs in structs) are refused: a hostile
/// metadata could make a class contain itself.
const MAX_VALUE_DEPTH: u32 = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Primitive {
    Boolean,
    Byte,
    Char,
    Short,
    Int,
    Long,
    Float,
    Double,
    String,
}

impl Primitive {
    fn of(class_name: &str) -> Option<Primitive> {
        Some(match class_name {
            "boolean" => Primitive::Boolean,
            "byte" => Primitive::Byte,
            "char" => Primitive::Char,
            "short" => Primitive::Short,
            "int" => Primitive::Int,
            "long" => Primitive::Long,
            "float" => Primitive::Float,
            "double" => Primitive::Double,
            "java.lang.String" => Primitive::String,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Field {
    pub(crate) name: String,
    pub(crate) type_id: u64,
    /// Index of `type_id` in [`Metadata::classes`], resolved once (`usize::MAX`: unknown).
    class: usize,
    /// The value is an index into the constant pool of `type_id`.
    pub(crate) constant_pool: bool,
    pub(crate) array: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct Class {
    pub(crate) id: u64,
    pub(crate) name: String,
    pub(crate) primitive: Option<Primitive>,
    pub(crate) fields: Vec<Field>,
    /// For a struct of primitives and constant-pool indices only (a stack frame, most pool
    /// constants), what each field is: read past without walking the fields' classes.
    flat: Option<Vec<Primitive>>,
}

/// A decoded top-level field value; inline structs and arrays are skipped.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(RawStr),
    /// Index into the constant pool of the field's class.
    Constant(u64),
    Skipped,
}

#[derive(Debug, Default)]
pub(crate) struct Metadata {
    pub(crate) classes: Vec<Class>,
    /// Class id to index in `classes`.
    ids: foldhash::HashMap<u64, usize>,
}

impl Metadata {
    /// Reads past the start of a metadata event's body (after its size and type id): its
    /// start, duration and id, which change from chunk to chunk when the rest does not.
    pub(crate) fn preamble(c: &mut Cursor<'_>) -> Result<(), Malformed> {
        let _start = c.long()?;
        let _duration = c.long()?;
        let _id = c.long()?;
        Ok(())
    }

    /// Parses the rest of a metadata event's body, after [`Metadata::preamble`].
    pub(crate) fn parse_classes(c: &mut Cursor<'_>) -> Result<Metadata, Malformed> {
        let n = c.count()?;
        let mut strings = Vec::with_capacity(n);
        for _ in 0..n {
            strings.push(match c.string()? {
                RawStr::Text(s) => s,
                _ => String::new(),
            });
        }
        let mut meta = Metadata::default();
        meta.element(c, &strings, 0, None)?;
        if meta.classes.is_empty() {
            return Err(Malformed::Metadata("no class descriptions"));
        }
        // Values are walked field by field: resolve each field's class once, not per value.
        let ids = &meta.ids;
        for class in &mut meta.classes {
            for f in &mut class.fields {
                f.class = ids.get(&f.type_id).copied().unwrap_or(usize::MAX);
            }
        }
        let flat: Vec<_> = meta.classes.iter().map(|c| meta.flat(c)).collect();
        for (class, flat) in meta.classes.iter_mut().zip(flat) {
            class.flat = flat;
        }
        Ok(meta)
    }

    /// What each field of `class` is, when every one is a single primitive or a
    /// constant-pool index (read as the long it is).
    fn flat(&self, class: &Class) -> Option<Vec<Primitive>> {
        if class.primitive.is_some() {
            return None;
        }
        class
            .fields
            .iter()
            .map(|f| match f {
                f if f.array => None,
                f if f.constant_pool => Some(Primitive::Long),
                f => self.classes.get(f.class)?.primitive,
            })
            .collect()
    }

    /// One element and its children; classes and their fields are kept, the rest
    /// (annotations, settings, regions) only read past.
    fn element(
        &mut self,
        c: &mut Cursor<'_>,
        strings: &[String],
        depth: u32,
        class: Option<usize>,
    ) -> Result<(), Malformed> {
        if depth > MAX_ELEMENT_DEPTH {
            return Err(Malformed::Metadata("elements nested too deep"));
        }
        let lookup = |i: i32| -> Result<&str, Malformed> {
            usize::try_from(i)
                .ok()
                .and_then(|i| strings.get(i))
                .map(String::as_str)
                .ok_or(Malformed::Metadata("string index out of range"))
        };
        let name = lookup(c.int()?)?;
        let n = c.count()?;
        let mut attributes = Vec::with_capacity(n.min(16));
        for _ in 0..n {
            let key = lookup(c.int()?)?;
            let value = lookup(c.int()?)?;
            attributes.push((key, value));
        }
        let attr = |k: &str| attributes.iter().find(|(key, _)| *key == k).map(|a| a.1);
        let mut this_class = None;
        match (name, class) {
            ("class", _) => {
                let id = attr("id")
                    .and_then(|v| v.parse::<u64>().ok())
                    .ok_or(Malformed::Metadata("class without a numeric id"))?;
                let class_name = attr("name").unwrap_or_default().to_string();
                let class = Class {
                    id,
                    primitive: Primitive::of(&class_name),
                    name: class_name,
                    fields: Vec::new(),
                    flat: None,
                };
                let index = match self.ids.get(&id) {
                    Some(&i) => {
                        self.classes[i] = class;
                        i
                    }
                    None => {
                        self.classes.push(class);
                        self.ids.insert(id, self.classes.len() - 1);
                        self.classes.len() - 1
                    }
                };
                this_class = Some(index);
            }
            ("field", Some(owner)) => {
                let field = Field {
                    name: attr("name").unwrap_or_default().to_string(),
                    type_id: attr("class")
                        .and_then(|v| v.parse().ok())
                        .ok_or(Malformed::Metadata("field without a numeric class"))?,
                    class: usize::MAX,
                    constant_pool: attr("constantPool") == Some("true"),
                    array: attr("dimension").is_some_and(|d| d != "0"),
                };
                self.classes[owner].fields.push(field);
            }
            _ => {}
        }
        let children = c.count()?;
        for _ in 0..children {
            self.element(c, strings, depth + 1, this_class)?;
        }
        Ok(())
    }

    pub(crate) fn class(&self, id: u64) -> Result<&Class, Malformed> {
        self.ids
            .get(&id)
            .map(|&i| &self.classes[i])
            .ok_or(Malformed::Metadata("value of an undescribed class"))
    }

    fn class_at(&self, index: usize) -> Result<&Class, Malformed> {
        self.classes
            .get(index)
            .ok_or(Malformed::Metadata("value of an undescribed class"))
    }

    /// Reads one value of a field: primitives and constant-pool indices are returned,
    /// inline structs and arrays are read past.
    pub(crate) fn value(&self, c: &mut Cursor<'_>, field: &Field) -> Result<Value, Malformed> {
        self.field(c, field, 0)
    }

    /// Reads past a value, keeping nothing (no string is built).
    pub(crate) fn skip(&self, c: &mut Cursor<'_>, field: &Field) -> Result<(), Malformed> {
        self.field(c, field, 1).map(|_| ())
    }

    /// Depth 0 returns the value; deeper values are only read past.
    fn field(&self, c: &mut Cursor<'_>, field: &Field, depth: u32) -> Result<Value, Malformed> {
        if !field.array {
            return self.single(c, field, depth);
        }
        let n = c.count()?;
        // Stack frames: an array of structs of primitives, walked as `single` would.
        let flat = match self.classes.get(field.class) {
            Some(class) if !field.constant_pool && depth + 1 < MAX_VALUE_DEPTH => {
                class.flat.as_deref()
            }
            _ => None,
        };
        if let Some(fields) = flat.filter(|fields| only_varints(c, fields)) {
            // Every element takes a byte or more: no hostile count spins here.
            c.skip_varints(n.checked_mul(fields.len()).ok_or(Malformed::Length)?)?;
            return Ok(Value::Skipped);
        }
        for _ in 0..n {
            let before = c.remaining();
            match flat {
                Some(fields) => skip_fields(c, fields)?,
                None => {
                    self.single(c, field, depth + 1)?;
                }
            }
            // Elements of no bytes would let a hostile count (or nested counts) spin.
            if c.remaining() == before {
                return Err(Malformed::Metadata("array of values without bytes"));
            }
        }
        Ok(Value::Skipped)
    }

    fn single(&self, c: &mut Cursor<'_>, field: &Field, depth: u32) -> Result<Value, Malformed> {
        if field.constant_pool {
            return Ok(Value::Constant(c.long()? as u64));
        }
        if depth > MAX_VALUE_DEPTH {
            return Err(Malformed::Metadata("values nested too deep"));
        }
        let class = self.class_at(field.class)?;
        Ok(match class.primitive {
            Some(Primitive::Boolean) => Value::Bool(c.u8()? != 0),
            Some(Primitive::Byte) => Value::Int(i64::from(c.u8()? as i8)),
            Some(Primitive::Char | Primitive::Short) => Value::Int(i64::from(c.short()?)),
            Some(Primitive::Int) => Value::Int(i64::from(c.int()?)),
            Some(Primitive::Long) => Value::Int(c.long()?),
            Some(Primitive::Float) => Value::Float(f64::from(c.float()?)),
            Some(Primitive::Double) => Value::Float(c.double()?),
            Some(Primitive::String) if depth == 0 => Value::Str(c.string()?),
            Some(Primitive::String) => {
                c.skip_string()?;
                Value::Skipped
            }
            // The same reads as walking the fields below, which are one level deeper.
            None => match &class.flat {
                Some(fields) if depth < MAX_VALUE_DEPTH => {
                    skip_fields(c, fields)?;
                    Value::Skipped
                }
                _ => {
                    for f in &class.fields {
                        self.field(c, f, depth + 1)?;
                    }
                    Value::Skipped
                }
            },
        })
    }

    /// Reads one constant of `class_id`; with `keep`, returns the text it stands for when
    /// the class is a string or a one-string holder (GC names, causes, VM operations).
    pub(crate) fn constant(
        &self,
        c: &mut Cursor<'_>,
        class: &Class,
        keep: bool,
    ) -> Result<Option<RawStr>, Malformed> {
        if class.primitive.is_some() {
            let as_field = Field {
                name: String::new(),
                type_id: class.id,
                class: self.ids.get(&class.id).copied().unwrap_or(usize::MAX),
                constant_pool: false,
                array: false,
            };
            return Ok(match self.single(c, &as_field, if keep { 0 } else { 1 })? {
                Value::Str(s) => Some(s),
                _ => None,
            });
        }
        if let (false, Some(fields)) = (keep, &class.flat) {
            // What skipping each field below reads, without walking them.
            return skip_fields(c, fields).map(|()| None);
        }
        // The first text field names the constant; a thread by its Java name, which comes
        // after its OS thread's (the same for a Java thread, empty for a virtual one).
        let named_by = (class.name == "java.lang.Thread").then_some("javaName");
        let mut text = None;
        for f in &class.fields {
            let wanted = text.is_none() || named_by == Some(f.name.as_str());
            if keep && wanted {
                if let Value::Str(s) = self.value(c, f)? {
                    let says_nothing =
                        matches!(&s, RawStr::Null) || matches!(&s, RawStr::Text(t) if t.is_empty());
                    if text.is_none() || !says_nothing {
                        text = Some(s);
                    }
                }
            } else {
                self.skip(c, f)?;
            }
        }
        Ok(text)
    }
}

/// Reads past the fields of a struct of primitives (strings are not built).
fn skip_fields(c: &mut Cursor<'_>, fields: &[Primitive]) -> Result<(), Malformed> {
    if only_varints(c, fields) {
        return c.skip_varints(fields.len());
    }
    for &primitive in fields {
        skip_primitive(c, primitive)?;
    }
    Ok(())
}

/// Whether `fields` (one or more) are all integers written as varints, which are read past
/// in one loop without decoding them: a stack frame (method, line, bytecode index, type),
/// most pool constants. Walking the stack traces of the pools field by field was a tenth
/// of reading a recording.
fn only_varints(c: &Cursor<'_>, fields: &[Primitive]) -> bool {
    c.compressed()
        && !fields.is_empty()
        && fields.iter().all(|p| {
            matches!(
                p,
                Primitive::Char | Primitive::Short | Primitive::Int | Primitive::Long
            )
        })
}

/// Reads past a value of a primitive inside a struct.
#[inline]
fn skip_primitive(c: &mut Cursor<'_>, primitive: Primitive) -> Result<(), Malformed> {
    match primitive {
        Primitive::Boolean | Primitive::Byte => {
            c.u8()?;
        }
        Primitive::Char | Primitive::Short => {
            c.short()?;
        }
        Primitive::Int => {
            c.int()?;
        }
        Primitive::Long => {
            c.long()?;
        }
        Primitive::Float => {
            c.float()?;
        }
        Primitive::Double => {
            c.double()?;
        }
        Primitive::String => c.skip_string()?,
    }
    Ok(())
}
