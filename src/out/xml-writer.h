/* xml-writer.h: the one writer of input text into XML (the JUnit report of
 * `kvplan check`).
 *
 * Stance: what it writes is well-formed XML 1.0 whatever it is given: markup
 * characters as entities, line breaks and tabs as character references (so
 * an attribute keeps them), the control characters and U+FFFE/U+FFFF that
 * XML forbids as '?', bytes that are not UTF-8 as U+FFFD. */
#ifndef KVP_XML_WRITER_H
#define KVP_XML_WRITER_H

#include <stdio.h>

/* `s` as XML character data or a double-quoted attribute value. */
void kvp_xml_text(FILE *f, const char *s);

#endif
