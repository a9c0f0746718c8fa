/* yaml-writer.h: the one writer of YAML text kvplan emits for other programs
 * (the engine config files of `kvplan size --emit`: vLLM's --config file,
 * TensorRT-LLM's extra_llm_api_options; the baselines and TAP YAML blocks of
 * `kvplan check`).
 *
 * Stance: a value that came from a file kvplan did not write (a model id) is
 * always a double-quoted scalar, so no character in it can start a comment,
 * a mapping, an anchor or a tag, or end the line: '"' and '\' are escaped,
 * control characters written as \xNN, a line break as \n, bytes that are not
 * UTF-8 as \ufffd (so the file stays valid YAML), and the characters YAML
 * reads as line breaks or may not hold raw (U+0080-U+009F with NEL U+0085,
 * U+2028, U+2029, U+FEFF, U+FFFE, U+FFFF) as \uXXXX.  Keys are
 * kvplan's own words and are written plain. */
#ifndef KVP_YAML_WRITER_H
#define KVP_YAML_WRITER_H

#include <stdint.h>
#include <stdio.h>

/* `s` as one double-quoted YAML scalar ("" for an empty or NULL s). */
void kvp_yaml_str(FILE *f, const char *s);

/* One line "<indent>key: value\n"; indent counts spaces. */
void kvp_yaml_kv_str(FILE *f, int indent, const char *key, const char *value);
void kvp_yaml_kv_u64(FILE *f, int indent, const char *key, uint64_t value);
void kvp_yaml_kv_f64(FILE *f, int indent, const char *key, double value);
/* A number in 9 significant digits (kvp_yaml_kv_f64 keeps 4 decimals: a
 * fixed cost of 0.00012 s would lose its figures); finite values only. */
void kvp_yaml_kv_num(FILE *f, int indent, const char *key, double value);
void kvp_yaml_kv_bool(FILE *f, int indent, const char *key, int value);
/* "<indent>key:\n", opening a nested mapping. */
void kvp_yaml_map(FILE *f, int indent, const char *key);
/* "<indent>- value\n", one item of a sequence opened with kvp_yaml_map. */
void kvp_yaml_item_str(FILE *f, int indent, const char *value);

#endif
