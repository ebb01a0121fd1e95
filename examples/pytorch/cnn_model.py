"""The example CNN (shared by train_cnn.py and bench/pytorch/hvd_vs_ddp.py): two conv
blocks and two fully connected layers, for synthetic 3 x S x S images."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self, image_size=32, num_classes=10, width=16):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 3, padding=1)
        self.conv2 = nn.Conv2d(width, 2 * width, 3, padding=1)
        self.fc1 = nn.Linear(2 * width * (image_size // 4) ** 2, 128)
        self.fc2 = nn.Linear(128, num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc2(F.relu(self.fc1(x)))


def synthetic_batch(batch_size, image_size=32, num_classes=10, seed=0):
    """A fixed random batch (no dataset download): images and labels."""
    g = torch.Generator().manual_seed(seed)
    data = torch.randn(batch_size, 3, image_size, image_size, generator=g)
    target = torch.randint(0, num_classes, (batch_size,), generator=g)
    return data, target
