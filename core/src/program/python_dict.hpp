// program/: the user's program as hpo sees it, its command line and the metrics it reports;
// shared by config/ (a command sweep's checks), platforms/ (specs and metric sources) and the
// command task's runner (tasks/command/runtime/runner.cpp). In hpo_core: no MPI, no torch.
//
// Private to hpo_core: reads the numbers of a printed Python dict, the way Hugging Face's Trainer
// (`{'eval_loss': 0.52, 'eval_accuracy': 0.81, 'epoch': 1.0}`, or '0.52' in transformers 5) and
// PyTorch Lightning (`{'val_loss': tensor(0.5123)}`) print their metrics. No MPI, no torch.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hpo {

// Parses `text` (blanks around it allowed) as Python's repr of one dict whose keys are strings
// (single or double quoted, Python's escapes) and returns its top-level members whose values are
// numbers, in order:
//  * numbers as repr prints them (3, -2, 0.5, 1e-05, 1e+20, nan, inf, -inf);
//  * a string that holds one such number and nothing else ('0.5', '1.235e+04'): Trainer's
//    printed logs in transformers 5 format their floats as strings with 4 significant digits;
//  * a call whose first argument is a number counts as that number: tensor(0.5),
//    tensor(0.5, device='cuda:0'), np.float64(0.5), torch.tensor(2);
//  * True, False, None, other names (torch.float32), other strings, lists, tuples, dicts and
//    calls without a leading number are read and skipped.
// False, with `why` set, when the text is not such a dict: a key that is not a string, a missing
// ':' or ',', a value of another form (`<object at 0x7f>`, 05, +5, .5), an unclosed bracket or
// string, nesting deeper than 64, text after the '}'.
bool ParsePythonDict(std::string_view text, std::vector<std::pair<std::string, double>>* numbers,
                     std::string* why);

}  // namespace hpo
