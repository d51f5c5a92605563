#!/usr/bin/env python3
"""TF-IDF + logistic regression on a text_classification corpus: the baseline a sweep must beat.

Reads the same train/validation/test TSV (or CSV) files as `task: text_classification`, fits
scikit-learn's TfidfVectorizer (word unigrams and bigrams, sublinear tf) and LogisticRegression on
the training split, picks C on the validation split (macro F1), and prints the test split's
accuracy, macro F1 and confusion matrix with the class names in the order hpo uses (sorted).

    /usr/bin/python3 bench/tfidf_baseline.py data/20newsgroups   # {train,validation,test}.tsv

Needs python3-sklearn (scripts/install-deps.sh installs it).
"""
import argparse
import csv
import sys
import time

from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, confusion_matrix, f1_score


def read_split(path, delimiter, text_column, label_column):
    csv.field_size_limit(sys.maxsize)
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter=delimiter))
    return [row[text_column] for row in rows], [row[label_column] for row in rows]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="folder with train, validation and test files")
    parser.add_argument("--format", choices=["tsv", "csv"], default="tsv")
    parser.add_argument("--text-column", default="text")
    parser.add_argument("--label-column", default="label")
    args = parser.parse_args()
    delimiter = "\t" if args.format == "tsv" else ","
    splits = {
        name: read_split(f"{args.folder}/{name}.{args.format}", delimiter, args.text_column,
                         args.label_column)
        for name in ("train", "validation", "test")
    }
    classes = sorted(set(splits["train"][1]))
    started = time.perf_counter()
    vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True,
                                 max_features=200_000)
    train_x = vectorizer.fit_transform(splits["train"][0])
    validation_x = vectorizer.transform(splits["validation"][0])
    best = None
    for c in (0.1, 1.0, 10.0, 100.0):
        model = LogisticRegression(C=c, max_iter=2000).fit(train_x, splits["train"][1])
        score = f1_score(splits["validation"][1], model.predict(validation_x), average="macro")
        print(f"C={c:g}: validation macro F1 {score:.4f}")
        if best is None or score > best[0]:
            best = (score, c, model)
    _, c, model = best
    predicted = model.predict(vectorizer.transform(splits["test"][0]))
    truth = splits["test"][1]
    seconds = time.perf_counter() - started
    print(f"best C={c:g} ({seconds:.1f} s for features, 4 fits and the test split)")
    print(f"test accuracy {accuracy_score(truth, predicted):.4f}")
    print(f"test macro F1 {f1_score(truth, predicted, average='macro'):.4f}")
    print(f"confusion (rows true, columns predicted; {', '.join(classes)}):")
    for row in confusion_matrix(truth, predicted, labels=classes):
        print("  " + " ".join(f"{count:5d}" for count in row))


if __name__ == "__main__":
    main()
