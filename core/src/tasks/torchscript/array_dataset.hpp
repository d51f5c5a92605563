// A user's data set of numeric arrays, read without torch from one of two layouts:
//  - an HDF5 file with the datasets train/x and train/y, and optionally val/x, val/y, test/x and
//    test/y (any other dataset or group in the file is ignored);
//  - a folder of .npy files named train_x.npy and train_y.npy, and optionally val_x.npy,
//    val_y.npy, test_x.npy and test_y.npy (any other file in the folder is ignored).
// x holds the samples' features, y their labels or targets; shape[0] of both counts the samples.
// Free functions; safe to call from any thread on different data sets (the HDF5 reads are not:
// the serial HDF5 library is not thread-safe).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "hpo/status.hpp"
#include "tasks/torchscript/numeric_array.hpp"

namespace hpo {

// The features and labels (or targets) of one split, and how messages name each array:
// "data.h5: val/x" for an HDF5 dataset, "data/val_x.npy" for a .npy file.
struct ArraySplit {
  NumericArray x;
  NumericArray y;
  std::string x_name;
  std::string y_name;
};

// The splits of a data set as LoadArrayDataset returns them. Its invariants: in every split x and
// y have the same number of samples, more than zero; validation and test samples have the shape
// of train samples (x.shape without shape[0]) and x elements of the same class (floating point or
// integer/bool) as train's. y is not checked: CheckClassLabels or CheckRegressionTargets does
// that, depending on the task. `source` is the path the data set was loaded from.
struct ArrayDataset {
  ArraySplit train;
  std::optional<ArraySplit> validation;
  std::optional<ArraySplit> test;
  std::string source;
};

// Loads the data set at `path`: an HDF5 file (a name ending in .h5, .hdf5 or .he5, or any regular
// file with the HDF5 signature) or a folder of .npy files. Each array is read once and moved into
// place. BadInput naming the file and the array ("data.h5: no dataset train/x",
// "data: no file train_y.npy", "data.h5: val/x has 100 samples but val/y has 99", ...) when the
// path does not exist, train x or y is missing, a split has x without y or y without x, or an
// invariant above does not hold; the readers' BadInput (ReadNpyFile, Hdf5ArrayFile) otherwise.
Status LoadArrayDataset(const std::string& path, ArrayDataset* dataset);

// For classification: every y must be integer or bool typed (bool reads as 0 and 1), of shape
// [N] or [N, 1], with labels >= 0; validation and test labels must be below the number of classes
// train's y implies. Sets `num_classes` to the largest train label + 1. BadInput naming the array
// (y_name), the label and its sample otherwise.
Status CheckClassLabels(const ArrayDataset& dataset, int64_t* num_classes);

// For regression: every y must be float or integer typed (not bool), of shape [N] (one output) or
// [N, k] with k > 0, and every split must have train's k. Sets `outputs` to k. BadInput naming the
// array (y_name) otherwise.
Status CheckRegressionTargets(const ArrayDataset& dataset, int64_t* outputs);

}  // namespace hpo
