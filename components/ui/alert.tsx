import { cva, type VariantProps } from "class-variance-authority";
import type { ComponentProps } from "react";
import { cn } from "../../lib/utils";

// The tones are components/ui/tone.ts's, written out here on purpose: an Alert is in the console
// layout's first load, and importing the shared map from it makes Turbopack split the layout chunk
// (measured: +1.1 KiB gzipped on every console page). Keep the two in step.
export const alertVariants = cva("relative w-full rounded-lg border px-4 py-3 text-sm", {
  variants: {
    variant: {
      default: "bg-card text-card-foreground",
      destructive:
        "border-destructive/50 bg-destructive/10 text-foreground [&>[data-slot=alert-title]]:text-destructive",
      success: "border-success/50 bg-success/10 text-foreground",
      warning: "border-warning/60 bg-warning/15 text-foreground",
    },
  },
  defaultVariants: { variant: "default" },
});

export type AlertProps = ComponentProps<"div"> & VariantProps<typeof alertVariants>;

/** Defaults to role="alert" (announced at once); pass role="status" for polite, non-urgent messages. */
export function Alert({ className, variant, role = "alert", ...props }: AlertProps) {
  return <div role={role} className={cn(alertVariants({ variant }), className)} {...props} />;
}

export function AlertTitle({ className, ...props }: ComponentProps<"p">) {
  return <p data-slot="alert-title" className={cn("mb-1 font-medium leading-none", className)} {...props} />;
}

export function AlertDescription({ className, ...props }: ComponentProps<"div">) {
  return <div className={cn("text-sm text-muted-foreground [&_p]:leading-relaxed", className)} {...props} />;
}
