#!/usr/bin/env python3
"""The held-out test accuracy of a built-in Fashion-MNIST CNN that `hpo sweep` saved, computed as
hpo computes it at a sweep's end (the 10,000 test images, normalised as in training), for a sweep
stopped before its end, which has not scored its selected trial yet (bench/RESULTS.md: issue 36's
tuning outcome at a given number of epochs; bench/tuning_outcome.py):

    /usr/bin/python3 bench/_fmnist_test_accuracy.py MODEL.pt [MODEL.pt ...] [--data DIR]

MODEL.pt is a finished trial's OUTPUT/models/trial_N.pt or a paused one's
OUTPUT/checkpoints/trial_N.pt (its parameters under `model.`). Either is a torch::save archive whose
parameter names are those of python_eager_cnn.build_cnn (BuildFashionCnn's layers in order); the
width is read from the first convolution."""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from python_eager_cnn import DATA, build_cnn, read_idx  # noqa: E402


def test_set(data=DATA):
    """(inputs, labels) of the 10,000 test images, normalised as hpo's trainer does."""
    images = read_idx(os.path.join(data, "t10k-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(data, "t10k-labels-idx1-ubyte.gz")).long()
    return images.float().div(255.0).sub(0.2860).div(0.3530).unsqueeze(1), labels


def saved_network(path):
    """The CNN saved in PATH (a model file or a checkpoint), in evaluation mode."""
    saved = torch.jit.load(path, map_location="cpu")
    state = dict(saved.named_parameters())
    state.update(dict(saved.named_buffers()))
    if "model.0.weight" in state:  # a checkpoint: the model beside the optimizer and the curve
        state = {k[len("model."):]: v for k, v in state.items() if k.startswith("model.")}
    net = build_cnn(int(state["0.weight"].shape[0]), 0.0)
    net.load_state_dict(state)
    return net.eval()


def test_accuracy(path, inputs, labels):
    """(width, accuracy) of the network saved in PATH on the test set."""
    net = saved_network(path)
    with torch.no_grad():
        accuracy = (net(inputs).argmax(1) == labels).float().mean().item()
    return net[0].weight.shape[0], accuracy


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("models", nargs="+")
    parser.add_argument("--data", default=DATA)
    args = parser.parse_args()
    inputs, labels = test_set(args.data)
    for path in args.models:
        width, accuracy = test_accuracy(path, inputs, labels)
        print("model=%s width=%d test_accuracy=%.4f" % (path, width, accuracy))


if __name__ == "__main__":
    main()
