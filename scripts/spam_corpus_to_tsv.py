#!/usr/bin/python3
"""Turns the SpamAssassin corpus (scripts/fetch-spam-corpus.sh) into the tables of
`task: text_classification`: FOLDER/train.tsv, validation.tsv and test.tsv, columns `text` and
`label`, written by Python's csv module (tab-delimited, RFC 4180 quoting, LF, UTF-8).

Usage: scripts/spam_corpus_to_tsv.py [FOLDER]      (default: data/spam-assassin in the checkout)

label: `spam` for the spam-1 and spam-2 groups, `ham` for easy-ham-1, easy-ham-2 and hard-ham-1
  (easy and hard ham together: the hard ones are what makes the task less trivial).
text: the decoded Subject header, a space, then the body; every other header is dropped. The body
  is the message's text/plain parts, or when it has none its text/html parts with the tags,
  scripts and styles removed and entities decoded; attachments and other types are dropped.
  Transfer encodings (base64, quoted-printable) and RFC 2047 headers are decoded; the charset is
  the declared one (Latin-1 when none is declared or it is unknown; undecodable bytes become
  U+FFFD). Control characters and runs of whitespace become single spaces, and the text is cut to
  its first 2,000 characters.
split: by the SHA-256 of the message's file name (NNNNN.MD5, the MD5 of the raw message): 0 mod 10
  goes to test, 1 to validation, the rest to train, about 80/10/10. It depends on nothing else, so
  it never changes between runs or machines. Rows are in group, then file name order.

Debian's python3, standard library only. Prints the counts per split and label.
"""

import collections
import csv
import email
import email.errors
import email.header
import hashlib
import html.parser
import os
import sys

MAX_TEXT_CHARACTERS = 2000
SPAM_GROUPS = ('spam-1', 'spam-2')
HAM_GROUPS = ('easy-ham-1', 'easy-ham-2', 'hard-ham-1')
SPLITS = ('train', 'validation', 'test')


class _HtmlText(html.parser.HTMLParser):
    """Collects the text of an HTML document outside <script> and <style>."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.pieces = []
        self._skipping = 0

    def handle_starttag(self, tag, attrs):
        if tag in ('script', 'style'):
            self._skipping += 1

    def handle_endtag(self, tag):
        if tag in ('script', 'style') and self._skipping > 0:
            self._skipping -= 1

    def handle_data(self, data):
        if not self._skipping:
            self.pieces.append(data)


def html_to_text(markup):
    parser = _HtmlText()
    parser.feed(markup)
    parser.close()
    return ' '.join(parser.pieces)


def decode_bytes(payload, charset):
    try:
        return payload.decode(charset or 'latin-1', errors='replace')
    except LookupError:
        return payload.decode('latin-1')


def decoded_subject(message):
    subject = message.get('Subject', '')
    try:
        return str(email.header.make_header(email.header.decode_header(subject)))
    except (email.errors.HeaderParseError, LookupError, UnicodeError):
        return str(subject)


def body_text(message):
    plain, markup = [], []
    for part in message.walk():
        if part.is_multipart() or part.get_content_maintype() != 'text':
            continue
        if (part.get('Content-Disposition') or '').strip().lower().startswith('attachment'):
            continue
        payload = part.get_payload(decode=True) or b''
        text = decode_bytes(payload, part.get_content_charset())
        if part.get_content_subtype() == 'html':
            markup.append(text)
        else:
            plain.append(text)
    if plain:
        return ' '.join(plain)
    return ' '.join(html_to_text(text) for text in markup)


def collapse(text):
    spaced = ''.join(' ' if ord(c) < 32 or 127 <= ord(c) < 160 else c for c in text)
    return ' '.join(spaced.split())[:MAX_TEXT_CHARACTERS]


def message_text(raw):
    message = email.message_from_bytes(raw)
    return collapse(decoded_subject(message) + ' ' + body_text(message))


def split_of(name):
    bucket = int(hashlib.sha256(name.encode('ascii')).hexdigest(), 16) % 10
    return 'test' if bucket == 0 else 'validation' if bucket == 1 else 'train'


def main():
    default_folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'data',
                                  'spam-assassin')
    folder = sys.argv[1] if len(sys.argv) > 1 else default_folder
    data = os.path.join(folder, 'package', 'data')
    if not os.path.isdir(data):
        sys.exit(f'spam_corpus_to_tsv.py: {data} not found; run scripts/fetch-spam-corpus.sh '
                 f'{folder} first')

    rows = {split: [] for split in SPLITS}
    counts = collections.Counter()
    for group in sorted(SPAM_GROUPS + HAM_GROUPS):
        label = 'spam' if group in SPAM_GROUPS else 'ham'
        for file_name in sorted(os.listdir(os.path.join(data, group))):
            if not file_name.endswith('.txt'):
                continue
            with open(os.path.join(data, group, file_name), 'rb') as message_file:
                text = message_text(message_file.read())
            split = split_of(file_name[:-len('.txt')])
            rows[split].append((text, label))
            counts[split, label] += 1

    for split in SPLITS:
        path = os.path.join(folder, split + '.tsv')
        with open(path + '.tmp', 'w', newline='', encoding='utf-8') as table:
            writer = csv.writer(table, delimiter='\t', lineterminator='\n')
            writer.writerow(['text', 'label'])
            writer.writerows(rows[split])
        os.replace(path + '.tmp', path)

    print(f'{"split":<12}{"ham":>7}{"spam":>7}{"total":>7}')
    for split in SPLITS:
        ham, spam = counts[split, 'ham'], counts[split, 'spam']
        print(f'{split:<12}{ham:>7}{spam:>7}{ham + spam:>7}')
    ham = sum(counts[split, 'ham'] for split in SPLITS)
    spam = sum(counts[split, 'spam'] for split in SPLITS)
    print(f'{"all":<12}{ham:>7}{spam:>7}{ham + spam:>7}')
    print(f'tables in {os.path.abspath(folder)}: ' + ', '.join(s + '.tsv' for s in SPLITS))


if __name__ == '__main__':
    main()
