"""A SageMaker script-mode training script's shape: hyperparameters as --name value arguments,
metrics printed as the tuning job's MetricDefinitions read them. It trains nothing: each epoch's
accuracy is a smooth function of the hyperparameters, so a test knows what to expect."""
import argparse
import math

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=1)
parser.add_argument("--lr", type=float, default=0.01)
parser.add_argument("--hidden-units", type=int, default=64)
parser.add_argument("--optimizer", type=str, default="sgd")
args = parser.parse_args()
for epoch in range(1, args.epochs + 1):
    accuracy = (0.9 - 0.05 * abs(math.log10(args.lr) + 2) + 0.0005 * args.hidden_units
                + (0.01 if args.optimizer == "adam" else 0.0) + 0.01 * epoch)
    print("Train Epoch: %d [60000/60000 (100%%)] Loss: %.6f" % (epoch, 1 - accuracy))
    print("Test set: Average loss: %.4f, Accuracy: %.4f" % (1 - accuracy, accuracy))
