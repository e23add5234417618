"""Small representation networks phi(a; tau) written as functions of one
flat parameter vector ``tau`` (the upper variable of hyper-representation
learning, Huang et al. 2021, BiAdam, Sec. 5.2 and App. A.1.2).

The paper does not describe its network. Two families, sized by
parameters so that a run on two CPU cores stays fast:

* ``"conv"``: ``depth`` blocks of [3 x 3 convolution with ``width``
  channels (padding 1), GELU, 2 x 2 average pooling (skipped once the image
  is 1 pixel wide)], then a linear layer to ``n_features`` outputs
  (``depth=4, width=64`` is the network of the few-shot literature, Vinyals
  et al. 2016; Finn et al. 2017);
* ``"mlp"``: ``depth`` hidden layers of ``width`` units with GELU, then a
  linear layer to ``n_features`` outputs.

Both end with ``tanh``, so ``||phi~||^2 < n_features + 1`` (with the
intercept), which certifies the lower level's L_g. GELU, average pooling
and no batch normalization keep f and g smooth in tau and the tasks of a
meta-batch uncoupled (docs/problems.md). The network is functional:
``features(tau, images)`` slices ``tau`` into the layers' weights (views),
so ``torch.func`` transforms differentiate through it in tau directly.
"""
import math

import torch
import torch.nn.functional as F

from benchmark_utils.checks.parameters import check_choice, check_int

NETWORKS = ("conv", "mlp")


class RepresentationNetwork:
    """phi(a; tau) for images ``a`` of shape (channels, side, side)."""

    def __init__(self, kind, image_shape, width, depth, n_features):
        check_choice("network", kind, NETWORKS)
        self.kind = kind
        self.width = check_int("width", width, 1)
        self.depth = check_int("depth", depth, 0 if kind == "mlp" else 1)
        self.n_features = check_int("n_features", n_features, 1)
        self.image_shape = tuple(int(s) for s in image_shape)
        self.shapes = self._layer_shapes()
        self.sizes = [math.prod(shape) for shape in self.shapes]
        self.n_params = sum(self.sizes)

    def _layer_shapes(self):
        channels, side, _ = self.image_shape
        shapes = []
        if self.kind == "conv":
            for _ in range(self.depth):
                shapes += [(self.width, channels, 3, 3), (self.width,)]
                channels = self.width
                side = side // 2 if side >= 2 else side
            n_in = channels * side * side
        else:
            n_in = channels * side * side
            for _ in range(self.depth):
                shapes += [(self.width, n_in), (self.width,)]
                n_in = self.width
        shapes += [(self.n_features, n_in), (self.n_features,)]
        return shapes

    def unflatten(self, tau):
        """The layers' weights and biases as views of ``tau``."""
        return [part.view(shape) for part, shape in
                zip(torch.split(tau, self.sizes), self.shapes, strict=True)]

    def features(self, tau, images):
        """phi(images; tau), shape (n_images, n_features), in (-1, 1)."""
        params = self.unflatten(tau)
        h = images
        n_hidden = len(params) // 2 - 1
        if self.kind == "conv":
            for i in range(n_hidden):
                h = F.gelu(F.conv2d(h, params[2 * i], params[2 * i + 1],
                                    padding=1))
                if h.shape[-1] >= 2:
                    h = F.avg_pool2d(h, 2)
            h = h.flatten(1)
        else:
            h = h.flatten(1)
            for i in range(n_hidden):
                h = F.gelu(F.linear(h, params[2 * i], params[2 * i + 1]))
        return torch.tanh(F.linear(h, params[-2], params[-1]))

    def initial_parameters(self, generator, dtype=torch.float64):
        """A random tau: He-normal weights for the hidden layers (GELU),
        LeCun-normal for the last one (tanh), zero biases."""
        parts = []
        for index, shape in enumerate(self.shapes):
            if len(shape) == 1:
                parts.append(torch.zeros(shape, dtype=dtype))
                continue
            fan_in = math.prod(shape[1:])
            last = index == len(self.shapes) - 2
            std = math.sqrt((1.0 if last else 2.0) / fan_in)
            parts.append(std * torch.randn(shape, generator=generator,
                                           dtype=dtype))
        return torch.cat([p.reshape(-1) for p in parts])

    def __repr__(self):
        return (f"RepresentationNetwork({self.kind!r}, image_shape="
                f"{self.image_shape}, width={self.width}, depth={self.depth}"
                f", n_features={self.n_features}, n_params={self.n_params})")
